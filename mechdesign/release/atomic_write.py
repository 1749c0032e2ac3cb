"""Write a text file atomically: the whole text or, on failure, the old file (``estimate -o``, ``privatize -o``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mechdesign.spec.errors import InputError

__all__ = ["write_text_atomically"]


def write_text_atomically(text: str, output: str, prefix: str) -> None:
    """Write ``text`` (UTF-8, mode 0644) to a temporary file ``prefix``* beside ``output``, then rename it
    over ``output`` (``os.replace`` is atomic). An OS error removes the temporary file and is raised as
    :class:`InputError` naming the option ``-o`` and the file."""
    target = Path(output)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise InputError(f"-o: cannot write {output}: {exc.strerror or exc}") from None
