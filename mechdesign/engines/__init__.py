"""How a design is solved: one module per engine (:class:`mechdesign.engines.base.Engine`), chosen in one place,
:mod:`mechdesign.engines.routing`. The engine table is in docs/explanation/engines.md."""
