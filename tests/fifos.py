"""FIFOs fed by a writer thread, for tests of inputs read once."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def fed_fifo(fifo: Path, data: bytes) -> threading.Thread:
    """A writer thread feeding ``data`` to the new FIFO ``fifo`` once it is opened."""
    os.mkfifo(fifo)

    def write() -> None:
        try:
            with open(fifo, "wb") as fh:  # blocks until a reader opens it
                fh.write(data)
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def unblock(fifo: Path, writer: threading.Thread) -> None:
    """Never leave the writer blocked in open(): the FIFO was not read."""
    if writer.is_alive():
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(5)
        os.close(fd)
