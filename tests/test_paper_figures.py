"""``mechdesign figures`` writes every paper figure (the PNGs were checked by eye against the captions)."""
from __future__ import annotations

import pytest

from mechdesign.bench.paper_figures import FIGURES
from mechdesign.cli.main import main


@pytest.mark.slow
def test_figures_command_writes_every_png(tmp_path):
    assert main(["figures", "--out", str(tmp_path)]) == 0
    for name in FIGURES:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
