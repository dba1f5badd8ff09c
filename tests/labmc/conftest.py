"""Make the shared test helper `progdsl` (tests/program/progdsl.py) importable."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "program"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
