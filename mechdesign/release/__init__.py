"""After the design: a mechanism object with exact sampling (``mechanism``), releasing a CSV column
(``privatize``) and reading/writing kernels (``kernel_io``)."""
