"""A kernel that ignores an interrupt is killed, so that one hung cell costs seconds, not the class.

When a cell runs past `Execute.timeout`, nbclient interrupts the kernel, records a timeout
error and sends the next cell. A notebook that ignores Ctrl-C
(`signal.signal(signal.SIGINT, signal.SIG_IGN)`, then `time.sleep(...)`) keeps the kernel in
that cell: every following cell then waits its own timeout (30 s each), and the student takes
the whole of gradacc-grade's --timeout. `KillUnheededInterrupts`, mixed into the sandbox's
kernel manager, listens on the kernel's IOPub channel while it interrupts: if the interrupted
cell has not ended (no "idle" status for an execute request) within `INTERRUPT_GRACE` seconds,
the kernel is killed. nbclient then sees a dead kernel and the submission fails at once, with
the reason ("Kernel died"), like a kernel that killed itself.

Only the interrupts nbclient sends for a cell timeout go through here; the interrupt that
jupyter_client sends while shutting a kernel down does not wait.
"""

from __future__ import annotations

import asyncio
import time

# seconds an interrupted cell has to end: KeyboardInterrupt is instant on an idle machine,
# several seconds on one loaded many times over
INTERRUPT_GRACE = 30.0


class KillUnheededInterrupts:
    """Mixin for jupyter_client's AsyncKernelManager: interrupt, then kill if not heeded."""

    async def interrupt_kernel(self) -> None:
        """Interrupt the running cell; kill the kernel if the cell is still running later."""
        iopub = self.connect_iopub()
        try:
            await asyncio.sleep(0.2)  # a new subscription takes a moment to reach the kernel
            await self._async_interrupt_kernel()
            if not await self._cell_ended(iopub, INTERRUPT_GRACE):
                self.log.warning(
                    "The kernel ignored an interrupt for %.0f s: killing it", INTERRUPT_GRACE
                )
                await self._async_kill_kernel()
        finally:
            iopub.close(linger=0)

    async def _cell_ended(self, iopub, grace: float) -> bool:
        """Did the kernel report an executed cell done (status idle) within `grace` seconds?"""
        deadline = time.monotonic() + grace
        while (left := deadline - time.monotonic()) > 0:
            if not await iopub.poll(timeout=left * 1000):
                return False
            frames = await iopub.recv_multipart()
            try:
                _, frames = self.session.feed_identities(frames)
                message = self.session.deserialize(frames, content=True)
            except Exception:  # noqa: BLE001 (a garbled message from the kernel is no answer)
                continue
            ended = message["msg_type"] == "status" and (
                message["content"].get("execution_state") == "idle"
            )
            if ended and message["parent_header"].get("msg_type") == "execute_request":
                return True
        return False
