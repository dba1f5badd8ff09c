"""Make the TPA test helpers (`tpa_systems`, `tpa_chc`) and the shared engine cases importable."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent / "program", HERE.parent / "engines"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
