"""``mechdesign bench``: the benchmark tables and figures (``tables``)."""
