"""The results store: one finished design per file, keyed by a hash of its normalised spec.

Layout of a store folder::

    <store>/<key[:2]>/<key>.json   the tidy row, the result's JSON (without the kernel), the spec
    <store>/<key[:2]>/<key>.npy    the emitted kernel (float64; its entries are the exact rationals
                                   p/2^k of the certified kernel, so nothing is rounded)

The key is the SHA-256 (first 24 hex digits) of the spec as :func:`mechdesign.load_spec`
normalises it (``Spec.to_dict()``: exact fractions, ε as written, defaults filled in), so the
same design reached from different sweeps, or written ``0.05`` and ``'1/20'``, is one entry.
Each file is written to a temporary name in the same folder and renamed into place
(``os.replace`` is atomic), the kernel before the JSON: a JSON file present means a finished
design, whatever happens to the process that writes it (killed, interrupted). Files are not
fsync'ed (that cost ~15 ms per design here): a power cut may lose the last designs, never
leave a half-written one behind the rename.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

__all__ = ["spec_key", "DirectoryStore", "MemoryStore", "open_store"]

KEY_DIGITS = 24


def spec_key(normalised_spec: dict) -> str:
    """Hash of a normalised spec (``load_spec(x).to_dict()``)."""
    text = json.dumps(normalised_spec, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_DIGITS]


def _atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class DirectoryStore:
    """A folder of JSON records and ``.npy`` kernels (see the module docstring)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from mechdesign.spec.errors import InputError

            raise InputError(f"store: cannot create the folder {self.root}: {exc.strerror or exc}") from None

    def _path(self, key: str, suffix: str) -> Path:
        return self.root / key[:2] / f"{key}{suffix}"

    def __contains__(self, key: str) -> bool:
        return self._path(key, ".json").exists()

    def get(self, key: str) -> dict | None:
        """The record of a finished design, or None."""
        try:
            return json.loads(self._path(key, ".json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable: treated as not finished, so the point is computed again

    def kernel(self, key: str) -> np.ndarray | None:
        path = self._path(key, ".npy")
        return np.load(path) if path.exists() else None

    def put(self, record: dict, kernel: np.ndarray | None) -> None:
        key = record["key"]
        self._path(key, "").parent.mkdir(parents=True, exist_ok=True)
        if kernel is not None:
            _atomic_write(self._path(key, ".npy"), lambda fh: np.save(fh, np.asarray(kernel, dtype=np.float64)))
        data = json.dumps(_finite(record), sort_keys=True, allow_nan=False, default=_jsonable).encode("utf-8")
        _atomic_write(self._path(key, ".json"), lambda fh: fh.write(data))

    def keys(self) -> Iterator[str]:
        for path in self.root.glob("*/*.json"):
            yield path.stem

    def __repr__(self) -> str:
        return f"DirectoryStore({str(self.root)!r})"


class MemoryStore:
    """The same interface, in memory (``store=None``: nothing persists)."""

    def __init__(self):
        self._records: dict[str, dict] = {}
        self._kernels: dict[str, Any] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def get(self, key: str) -> dict | None:
        return self._records.get(key)

    def kernel(self, key: str):
        return self._kernels.get(key)

    def put(self, record: dict, kernel) -> None:
        self._records[record["key"]] = json.loads(json.dumps(_finite(record), allow_nan=False, default=_jsonable))
        self._kernels[record["key"]] = kernel

    def keys(self) -> Iterator[str]:
        return iter(list(self._records))


def _finite(v):
    """NaN and ±inf (not JSON) become None, recursively."""
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    if isinstance(v, (float, np.floating)):
        return float(v) if np.isfinite(v) else None
    return v


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"cannot store {type(v).__name__}")


def open_store(store) -> DirectoryStore | MemoryStore:
    if store is None:
        return MemoryStore()
    if isinstance(store, (DirectoryStore, MemoryStore)):
        return store
    return DirectoryStore(store)
