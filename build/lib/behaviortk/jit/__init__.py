"""The numba machinery, and no maths: the kernel decorators and their disk cache
(``compile.py``), compiling generated source (``generated.py``).

Formulas live with their domain (``steering/formulas.py``, ``vec.py``, ...) as plain
NumPy; importing ``jit.compile`` registers them with numba. Nothing imports this
package unless compiled kernels are asked for.
"""
