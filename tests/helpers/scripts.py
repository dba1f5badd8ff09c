"""The measurement scripts of `scripts/` as modules, for their tests (scripts are not a package)."""
import importlib.util
from pathlib import Path

SCRIPTS = Path(__file__).parents[2] / "scripts"


def load_script(name: str):
    """`scripts/<name>.py` imported as a module."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
