"""Saving a structured mechanism as JSON (written atomically)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from mechdesign.spec.errors import InputError

__all__ = ["write_json_atomically"]


def write_json_atomically(data, path) -> None:
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".mechanism-", dir=path.parent if str(path.parent) else ".")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
