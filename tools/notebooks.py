"""Run a notebook headless: the one execution helper of the course runner and of every test.

`python -m tools.notebooks notebooks/01_*.ipynb` runs notebooks and prints each one's time;
the site builder (`tools.site`) and every notebook test call `execute_notebook`.

Three things make a run you can rely on, on a busy machine too:

- Every wait has a limit and a name. The kernel must answer within `startup_timeout`
  seconds and each cell must finish within `cell_timeout`; otherwise `NotebookError`
  says which notebook and which cell.
- No reply goes unnoticed. While a cell runs, nbclient waits on the kernel's shell socket
  for the reply, and it answers each update of an ipywidgets `Output` widget by sending
  a message on that same socket. ZMQ announces incoming messages on an edge-triggered
  file descriptor, and such a send can swallow the announcement: the reply then sat
  unread until the wait's own time-out, the 600-s cell limit (lesson 1 once took 615 s,
  kernel and runner idle). The client here waits in slices of one second, and each
  slice looks at the socket afresh, so a lost announcement costs at most a second.
- The kernel talks over IPC (Unix sockets in a private temporary folder), not TCP: no
  port to pick that another run could take first, nothing reachable from the network,
  and no "running over TCP without encryption" warning.
"""

from __future__ import annotations

import argparse
import atexit
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty

import nbformat
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

STARTUP_TIMEOUT = (
    120  # s: a kernel answers in 2-5 s alone, in about 20 s on a loaded 2-core machine
)
CELL_TIMEOUT = 300  # s: the slowest lesson cell takes about 20 s alone; 15 times that is a hang
SLICE = 1.0  # s: the longest a lost wake-up of a socket can delay a message


class NotebookError(RuntimeError):
    """A notebook could not be run to its end: which notebook, which cell, and why."""


@dataclass
class ExecutedNotebook:
    """What a run gives back: the notebook with its outputs, its time, and the values asked for."""

    notebook: nbformat.NotebookNode
    seconds: float
    values: dict = field(default_factory=dict)  # {expression: its JSON value in the kernel}
    started: float = 0.0  # when the run began: time.time(), seconds since the epoch


def execute_notebook(
    path: Path | str,
    values: Sequence[str] = (),
    *,
    cell_timeout: int = CELL_TIMEOUT,
    startup_timeout: int = STARTUP_TIMEOUT,
    kernel: str = "python3",
) -> ExecutedNotebook:
    """Run the notebook at `path` top to bottom in its own folder.

    `values` are Python expressions evaluated in the kernel after the last cell (a test
    reads what the lesson computed, not what it printed); they must give JSON values.
    Returns the executed notebook, the seconds it took and {expression: value}.
    Raises NotebookError naming the notebook and the cell when the kernel does not
    start, a cell raises, runs past `cell_timeout` or kills the kernel.
    """
    path = Path(path)
    notebook = nbformat.read(path, as_version=4)
    if values:
        notebook.cells.append(nbformat.v4.new_code_cell(_values_cell(values)))
    with tempfile.TemporaryDirectory(prefix="gradacc-kernel-") as sockets:
        client = _client(notebook, path.parent, Path(sockets), kernel)
        client.timeout, client.startup_timeout = cell_timeout, startup_timeout
        started, start = time.time(), time.perf_counter()
        _run(client, path.name)
        seconds = time.perf_counter() - start
    found = json.loads(_stdout(notebook.cells.pop())) if values else {}
    return ExecutedNotebook(notebook, seconds, found, started)


class _SlicedChannel(AsyncZMQSocketChannel):
    """A kernel channel that waits in slices, looking at its socket afresh in each."""

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = SLICE if deadline is None else min(SLICE, max(0.0, deadline - time.monotonic()))
            try:
                return await super().get_msg(timeout=left)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise


class _SlicedClient(AsyncKernelClient):
    shell_channel_class = _SlicedChannel
    iopub_channel_class = _SlicedChannel


def _client(notebook, folder: Path, sockets: Path, kernel: str) -> NotebookClient:
    """An nbclient client whose kernel talks over IPC, through channels that wait in slices."""
    client = NotebookClient(
        notebook,
        kernel_name=kernel,
        resources={"metadata": {"path": str(folder)}},
    )
    client.km = client.create_kernel_manager()
    client.km.transport = "ipc"
    client.km.ip = str(sockets / "kernel")  # the kernel's sockets: kernel-1 ... kernel-5
    client.km.client_factory = _SlicedClient
    return client


def _run(client: NotebookClient, name: str) -> None:
    """client.execute(), its failures turned into a NotebookError naming the notebook and cell."""
    where = {"index": None}
    client.on_cell_start = lambda cell, cell_index: where.update(index=cell_index)
    try:
        client.execute()
    except CellTimeoutError as error:
        raise NotebookError(f"{_cell(name, client, where)} ran past {client.timeout} s") from error
    except CellExecutionError as error:
        raise NotebookError(
            f"{_cell(name, client, where)} raised {error.ename}: {error.evalue}"
        ) from error
    except DeadKernelError as error:
        raise NotebookError(f"{_cell(name, client, where)}: the kernel died") from error
    except RuntimeError as error:  # nbclient's "Kernel didn't respond in N seconds"
        if where["index"] is not None:
            raise
        # nbclient has already shut the kernel down; its exit hook would try again.
        atexit.unregister(client._cleanup_kernel)
        raise NotebookError(
            f"{name}: the kernel did not start within {client.startup_timeout} s ({error})"
        ) from error


def _cell(name: str, client: NotebookClient, where: dict) -> str:
    index = where["index"]
    if index is None:
        return f"{name}, before its first cell,"
    first_line = client.nb.cells[index].source.strip().splitlines()[0][:60]
    return f"{name}, cell {index} ({first_line!r}),"


def _values_cell(values: Sequence[str]) -> str:
    items = ", ".join(f"{expression!r}: ({expression})" for expression in values)
    return f"import json as _json\nprint(_json.dumps({{{items}}}))"


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


def notebook_paths(argv: list[str] | None, prog: str, description: str) -> list[Path]:
    """The notebooks named on a command line; stops with a usage message if one is missing."""
    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=description)
    parser.add_argument("notebooks", nargs="+", type=Path, help="notebooks (.ipynb)")
    paths = parser.parse_args(argv).notebooks
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    return paths


def main(argv: list[str] | None = None) -> int:
    """Run each notebook named on the command line; print its time, or why it failed."""
    description = "Run notebooks headless, top to bottom, and print each one's time."
    for path in notebook_paths(argv, "tools.notebooks", description):
        try:
            seconds = execute_notebook(path).seconds
        except NotebookError as error:
            print(error, file=sys.stderr)
            return 1
        print(f"{path.name:<45} executed in {seconds:5.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
