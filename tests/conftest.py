"""Where the lessons live (the fixtures every test gets are in ../conftest.py)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
