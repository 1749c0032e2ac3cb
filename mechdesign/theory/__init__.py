"""The papers' mathematics: measures of a given kernel (``measures``) and the closed-form results and
bounds (``bounds``), each with its paper, theorem and domain in the docstring."""
