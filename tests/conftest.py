"""Where the lessons live (the fixtures every test gets are in ../conftest.py)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def printed(notebook) -> str:
    """Everything an executed notebook printed or showed as plain text, in order."""
    return "".join(
        output.get("text", "") + output.get("data", {}).get("text/plain", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
