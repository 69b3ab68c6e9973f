"""The kernel that nbgrader drives, started in the sandbox; its output capped as it arrives.

nbgrader's Execute preprocessor (an nbclient NotebookClient) keeps every output message
of every cell in memory until the notebook is written: 300 MiB printed in 4 s took the
grader to 2.1 GiB and wrote a 315 MB notebook into autograded/. So the kernel client of
`SandboxKernelManager` (`CappedKernelClient`) bounds what reaches nbgrader, in the
grader's process, message by message as it comes off the socket:

- no message larger than `OutputLimits.message_bytes` is taken in (ZMQ's MAXMSGSIZE:
  the kernel's connection is dropped instead, and the notebook fails with the reason),
  and no more than `queued_messages` wait in ZMQ's queue (its high-water mark);
- past `cell_bytes` of output in a cell, or `notebook_bytes` in the notebook, outputs
  are cut: the cell gets one note saying so on the stream that was cut, and what
  decides a grade stays, shortened: an error (its name, the start of its message and
  of its last traceback line), an execute_result's text, a note on stderr where stderr
  was cut (nbgrader scores a test cell with stderr output 0, cut or not).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from traitlets import Integer, List, Type, Unicode

from gradacc_grader.folders import remove_tree
from gradacc_grader.interrupts import KillUnheededInterrupts
from gradacc_grader.sandbox import PYTHON, Limits, Sandbox, SandboxError, give_to_sandbox

# seconds a dropped connection waits to see the kernel end: its sandbox (bwrap) ends a
# moment after the kernel; a kernel that only sent too large a message goes on running
ENDING_SECONDS = 2.0
KEPT = 2000  # characters of an error or a result kept once a cell is past its limit
LOG_BYTES = 1 << 20  # of the kernel's own stdout and stderr kept in the student's grading.log
SOCKETS_TIMEOUT = 120.0  # seconds a starting kernel has to make its sockets (a loaded machine)
# kernel messages that carry output (the rest: status, execute_input, ... pass untouched)
_OUTPUTS = {"stream", "display_data", "execute_result", "error", "update_display_data"}
_COMMS = {"comm_open", "comm_msg", "comm_close"}  # widgets: their state is kept too


@dataclass(frozen=True)
class OutputLimits:
    """How much output of one notebook's kernel the grader takes in (GRADING.md: why).

    >>> OutputLimits().cell_bytes
    1048576
    """

    cell_bytes: int = 1 << 20  # output of one cell, all its messages together
    notebook_bytes: int = 4 << 20  # output of the whole notebook
    message_bytes: int = 4 << 20  # one message (a larger one is never received)
    queued_messages: int = 50  # messages waiting in ZMQ's queue before the kernel waits
    # cells whose output is counted: twice the cells a submission may hold (SubmissionLimits).
    # The kernel writes each message's parent itself; past this, a new parent is one it made
    # up, and counting it would let the kernel grow the grader's memory without bound.
    cells_counted: int = 2000


class OutputBudget:
    """What one notebook's cells sent so far; cuts the output messages past a limit.

    >>> budget = OutputBudget(OutputLimits(cell_bytes=10, notebook_bytes=100))
    >>> def printed(text):
    ...     return {"msg_type": "stream", "header": {"msg_type": "stream"},
    ...             "parent_header": {"msg_id": "cell-1"},
    ...             "content": {"name": "stdout", "text": text}}
    >>> budget.cap(printed("12345"), 5)["content"]["text"]
    '12345'
    >>> budget.cap(printed("67890!"), 6)["content"]["text"]
    '\\n[output cut: this cell sent more than 10 bytes of output]\\n'
    >>> budget.cap(printed("more"), 4)["msg_type"]  # dropped: nbclient ignores it
    'execute_input'
    >>> few = OutputBudget(OutputLimits(cells_counted=1))
    >>> made_up = {**printed("x"), "parent_header": {"msg_id": "no such cell"}}
    >>> few.cap(printed("x"), 1)["msg_type"], few.cap(made_up, 1)["msg_type"], len(few.used)
    ('stream', 'execute_input', 1)
    """

    def __init__(self, limits: OutputLimits):
        self.limits = limits
        self.used: dict[str, int] = {}  # bytes per cell (the request's msg_id)
        self.total = 0
        self.noted: set[tuple[str, str]] = set()  # (cell, stream) that got their note

    def cap(self, msg: dict, size: int) -> dict:
        """The message as nbgrader may see it: whole, shortened, or dropped (made inert)."""
        kind = msg["msg_type"]
        if kind not in _OUTPUTS and kind not in _COMMS:
            return msg
        cell = msg["parent_header"].get("msg_id", "")
        if cell not in self.used and len(self.used) >= self.limits.cells_counted:
            return _inert(msg)  # a parent made up by the kernel: not counted, not shown
        self.used[cell] = self.used.get(cell, 0) + size
        self.total += size
        if self.used[cell] <= self.limits.cell_bytes and self.total <= self.limits.notebook_bytes:
            return msg
        content = msg["content"]
        if kind == "error":
            last = (content.get("traceback") or [""])[-1]
            msg["content"] = {
                "ename": str(content.get("ename"))[:200],
                "evalue": str(content.get("evalue"))[:KEPT],
                "traceback": [self._why(cell), str(last)[:KEPT]],
            }
            return msg
        if kind == "execute_result":
            text = str(content.get("data", {}).get("text/plain", ""))[:KEPT]
            content["data"], content["metadata"] = {"text/plain": text}, {}
            return msg
        name = content.get("name") if kind == "stream" else "stdout"
        if not self.first_note(msg, name):
            return _inert(msg)
        return _stream(msg, name, f"\n[output cut: {self._why(cell)}]\n")

    def first_note(self, msg: dict, kind: str) -> bool:
        """True the first time a note of this kind is due in this message's cell."""
        key = (msg["parent_header"].get("msg_id", ""), kind)
        first = key not in self.noted
        self.noted.add(key)
        return first

    def _why(self, cell: str) -> str:
        if self.used[cell] > self.limits.cell_bytes:
            return f"this cell sent more than {_size(self.limits.cell_bytes)} of output"
        return f"the notebook sent more than {_size(self.limits.notebook_bytes)} of output"


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count} bytes"


def _stream(msg: dict, name: str, text: str) -> dict:
    msg["msg_type"] = msg["header"]["msg_type"] = "stream"
    msg["content"] = {"name": name, "text": text}
    return msg


def _inert(msg: dict) -> dict:
    """A message nbclient reads and ignores (it keeps no execute_input)."""
    msg["msg_type"] = msg["header"]["msg_type"] = "execute_input"
    msg["content"] = {}
    return msg


def copy_some(source: int, dest: int, most: int) -> None:
    """Copy what arrives on `source` to `dest` up to `most` bytes, one note, then drop the rest.

    >>> read_end, write_end = os.pipe()
    >>> _ = os.write(write_end, b"x" * 100); os.close(write_end)
    >>> out_read, out_write = os.pipe()
    >>> copy_some(read_end, out_write, 10); os.close(out_write)
    >>> print(os.read(out_read, 1000).decode())
    xxxxxxxxxx
    [the kernel wrote more than 10 bytes on its stdout and stderr: the rest is dropped]
    <BLANKLINE>
    """
    copied = 0
    with os.fdopen(source, "rb", buffering=0) as pipe:
        while chunk := pipe.read(1 << 16):
            if copied < most:
                kept = chunk[: most - copied]
                os.write(dest, kept)
                copied += len(kept)
                if copied >= most:
                    note = f"\n[the kernel wrote more than {_size(most)} on its stdout and stderr"
                    os.write(dest, f"{note}: the rest is dropped]\n".encode())


class OutputRefusedError(RuntimeError):
    """The kernel sent a message larger than the grader takes in: the notebook fails."""


class CappedChannel(AsyncZMQSocketChannel):
    """The iopub channel: each message's size counted before it is parsed, then capped.

    ZMQ drops the connection of a kernel that sends a message over MAXMSGSIZE, and does
    not make it again: every later output would be lost, and nbgrader would wait for
    each cell's end in vain. (Connecting again from here made the kernel's ZMQ abort.)
    So the channel watches its connection and fails the notebook, with the reason, the
    moment it is dropped.
    """

    limits = OutputLimits()

    def __init__(self, socket, session, loop=None):
        super().__init__(socket, session, loop)
        self.budget = OutputBudget(self.limits)
        self.monitor = socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self.kernel = None  # the kernel's manager (CappedKernelClient sets it), or None

    async def get_msg(self, timeout: float | None = None) -> dict:
        """The next message (capped); Empty after `timeout`; OutputRefusedError if cut off."""
        poller = zmq.asyncio.Poller()
        poller.register(self.socket, zmq.POLLIN)
        poller.register(self.monitor, zmq.POLLIN)
        ready = dict(await poller.poll(None if timeout is None else int(timeout * 1000)))
        if self.socket in ready:
            return await self._recv()
        if self.monitor in ready:
            # A kernel that ends (killed for an ignored interrupt, or out of CPU time) drops
            # the connection too: that is a death, not a refused message.
            if await self._kernel_ended():
                raise DeadKernelError("Kernel died")
            raise OutputRefusedError(
                f"the kernel sent a message of more than {_size(self.limits.message_bytes)} "
                "(its output is refused, and the notebook not graded)"
            )
        raise Empty

    async def _kernel_ended(self) -> bool:
        """Has the kernel ended? Its sandbox may take a moment to end after it."""
        if self.kernel is None:
            return False
        deadline = time.monotonic() + ENDING_SECONDS
        while await self.kernel.is_alive():
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def _recv(self, **kwargs) -> dict:
        frames = await self._recv_frames()
        _, message = self.session.feed_identities(frames)
        # [signature, header, parent header, metadata, content, buffers...]
        size = sum(len(frame) for frame in message[4:])
        return self.budget.cap(self.session.deserialize(message), size)

    async def _recv_frames(self) -> list[bytes]:
        """One message's frames, their bytes counted together as they arrive.

        ZMQ's MAXMSGSIZE bounds each frame, not the message: one message of N frames of
        almost 4 MiB each cost the grader N x 4 MiB. Past `message_bytes` in all, the rest of
        its frames are read and dropped one by one, and the notebook fails with the reason.
        """
        frames, size, most = [], 0, self.limits.message_bytes
        while True:
            frame = await self.socket.recv()
            size += len(frame)
            if size <= most:
                frames.append(frame)
            else:
                frames.clear()  # dropped: never more than one frame of it held from here on
            if not self.socket.get(zmq.RCVMORE):
                break
        if size > most:
            raise OutputRefusedError(
                f"the kernel sent a message of more than {_size(most)} "
                "(its output is refused, and the notebook not graded)"
            )
        return frames

    def close(self) -> None:
        """Close the monitor, then the socket."""
        if self.socket is not None and not self.socket.closed:
            self.socket.disable_monitor()
        self.monitor.close(linger=0)
        super().close()


class CappedKernelClient(AsyncKernelClient):
    """A kernel client whose sockets refuse huge messages and whose iopub output is capped."""

    iopub_channel_class = Type(CappedChannel)

    @property
    def iopub_channel(self) -> CappedChannel:
        channel = super().iopub_channel
        if isinstance(self.parent, AsyncKernelManager):  # it made this client (its .client())
            channel.kernel = self.parent
        return channel

    def _context_default(self) -> zmq.asyncio.Context:
        context = super()._context_default()  # this client's own, destroyed with it
        context.setsockopt(zmq.MAXMSGSIZE, CappedChannel.limits.message_bytes)
        context.setsockopt(zmq.RCVHWM, CappedChannel.limits.queued_messages)
        return context


class SandboxKernelManager(KillUnheededInterrupts, AsyncKernelManager):
    """A kernel manager that starts every kernel inside the bubblewrap sandbox.

    nbgrader starts the kernel in `<course>/autograded/<student>/<assignment>`; this
    manager copies the submitted notebooks of `<course>/submitted/<student>/<assignment>`
    (regular files only, nothing else of the submission) into a fresh folder, and runs
    `python -I -m ipykernel_launcher` in the sandbox's in-memory working folder, which
    shows those copies read-only. Whatever the notebook's metadata names, the kernel is
    Python. Its clients are `CappedKernelClient`s.

    The kernel makes its Unix sockets in a folder on the grader's disk, bound into the
    sandbox writable: once they are there, before any cell runs, the manager moves them
    out and removes that folder (`_seal_sockets`): the sandbox keeps a folder that no
    longer exists, where no file can be made, whoever the grader runs as. Its folders
    are removed when the kernel is shut down.
    """

    course_root = Unicode(help="the nbgrader course folder nbgrader runs in (hidden)").tag(
        config=True
    )
    hidden = List(Unicode(), help="more folders the kernel must not see").tag(config=True)
    scratch_root = Unicode(help="folder where each kernel gets its scratch copy").tag(config=True)
    cpu_seconds = Integer(Limits.cpu_seconds).tag(config=True)
    memory_bytes = Integer(Limits.memory_bytes).tag(config=True)
    processes = Integer(Limits.processes).tag(config=True)

    def __init__(self, **kwargs):
        kwargs["kernel_name"] = "python3"  # never a kernel the student's metadata asks for
        kwargs["client_class"] = "gradacc_grader.kernel.CappedKernelClient"
        super().__init__(**kwargs)
        self.folder: Path | None = None

    def sandbox(self) -> Sandbox:
        """The sandbox this manager's kernels run in."""
        hidden = tuple(Path(p) for p in (self.course_root, *self.hidden))
        return Sandbox(hidden, Limits(self.cpu_seconds, self.memory_bytes, self.processes))

    async def _async_pre_start_kernel(self, **kw):
        from gradacc_grader.submissions import copy_regular_files

        course = Path(self.course_root).resolve()
        relative = Path(kw.get("cwd") or os.getcwd()).resolve().relative_to(course / "autograded")
        self._remove_folder()  # a restart: the last kernel's folder goes
        folder = Path(tempfile.mkdtemp(prefix="kernel-", dir=self.scratch_root or None))
        self.folder = folder
        copies, sockets = folder / "work", folder / "sockets"
        problems = copy_regular_files(course / "submitted" / relative, copies, notebooks_only=True)
        if problems:
            raise SandboxError(f"refused to start a kernel: {'; '.join(problems)}")
        sockets.mkdir()
        self.transport, self.ip = "ipc", str(sockets / "kernel")
        # Read-only in the sandbox, beside the sockets' folder, never in it: the kernel reads
        # it, and writes it again only if it is gone (once its sockets are moved, it would
        # write into a removed folder, and die).
        self.connection_file = str(folder / "kernel.json")
        self.kernel_spec.interrupt_mode = "message"  # SIGINT to bwrap would not reach it
        _, kw = await super()._async_pre_start_kernel(**kw)
        give_to_sandbox(folder)
        kernel = [*PYTHON, "-m", "ipykernel_launcher", "-f", self.connection_file]
        kernel += ["--HistoryManager.hist_file=:memory:", "--IPKernelApp.ignore_cwd=True"]
        kw["cwd"] = str(folder)
        # What the kernel writes on its own stdout and stderr (ipykernel's saved copies, which
        # student code can reach) goes through a pipe, copied into grading.log up to a bound:
        # a kernel once wrote 268 MB there.
        kw["stdout"] = kw["stderr"] = self._log_pipe()
        files = tuple(sorted(copies.iterdir()))
        command = self.sandbox().command(
            kernel, files, shared=(sockets,), readonly=(Path(self.connection_file),)
        )
        return command, kw

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        finally:
            os.close(kw["stderr"])  # the kernel holds the only write end: EOF when it ends
        await self._seal_sockets()

    def _log_pipe(self) -> int:
        """The write end of a pipe whose first LOG_BYTES go to this process's stderr."""
        read_end, write_end = os.pipe()
        thread = threading.Thread(target=copy_some, args=(read_end, 2, LOG_BYTES), daemon=True)
        thread.start()
        return write_end

    async def _seal_sockets(self) -> None:
        """Wait for the kernel's sockets, move them out of its shared folder, remove that folder.

        Before any client connects and any cell runs, so only the kernel's own start-up
        writes there. A Unix socket is found by its file, wherever it is moved on the same
        disk; a folder that was removed takes no new file (ENOENT), even for the sandbox
        that still has it bound. The kernel's start-up goes on meanwhile: it makes nothing
        more there (its connection file, which it checks after its sockets, is elsewhere).
        """
        shared = Path(self.ip).parent
        ports = (self.shell_port, self.iopub_port, self.stdin_port, self.control_port, self.hb_port)
        sockets = [Path(f"{self.ip}-{port}") for port in ports]
        deadline = time.monotonic() + SOCKETS_TIMEOUT
        while not all(path.is_socket() for path in sockets):
            if not await self._async_is_alive():
                raise SandboxError("the kernel ended before it made its sockets")
            if time.monotonic() > deadline:
                await self._async_kill_kernel()
                raise SandboxError(f"the kernel made no sockets in {SOCKETS_TIMEOUT:.0f} s")
            await asyncio.sleep(0.05)
        private = shared.with_name("ipc")  # outside the sandbox
        private.mkdir()
        for path in shared.iterdir():
            path.rename(private / path.name)
        shared.rmdir()
        self.ip = str(private / "kernel")

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart)
        if not restart:
            self._remove_folder()

    cleanup_resources = _async_cleanup_resources  # the base class binds its own by name

    def _remove_folder(self) -> None:
        if self.folder is not None and self.folder.exists():
            remove_tree(self.folder)
        self.folder = None
