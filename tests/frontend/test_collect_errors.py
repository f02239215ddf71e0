"""``f2loopy show`` (which collects every error of a file) gives the same
located errors as ``translate`` where a declaration fails: a parameter whose
value could not be computed is no half-made symbol that a later statement
trips over (issue 26, item 8)."""

import pytest
from click.testing import CliRunner

from f2loopy.cli import main

TYPE_DECL = """subroutine tolcheck(n, tau, x)
  integer n, i
  real tau, x(n)
  real, parameter :: small = sqrt(sqrt(epsilon(tau) + tau))
  do i = 1, n
    if (x(i) < small) x(i) = 0.0
  end do
end subroutine
"""

PARAMETER_STMT = """subroutine tolcheck(n, tau, x)
  integer n, i
  real tau, x(n), small
  parameter (small = sqrt(epsilon(tau) + tau))
  do i = 1, n
    if (x(i) < small) x(i) = 0.0
  end do
end subroutine
"""


@pytest.mark.parametrize("text, line, col", [(TYPE_DECL, 4, 48), (PARAMETER_STMT, 4, 35)],
                         ids=["type_declaration", "parameter_statement"])
@pytest.mark.parametrize("command", ["show", "translate"])
def test_failed_parameter_is_a_located_error(tmp_path, text, line, col, command):
    path = tmp_path / "k.f90"
    path.write_text(text)
    res = CliRunner().invoke(main, [command, str(path)])
    assert res.exit_code == 1, res.output
    assert "internal error" not in res.output
    assert f"{path}:{line}:{col}: error: 'tau' is not a constant" in res.output
    assert not (tmp_path / "k.cl").exists()


def test_inquiry_of_a_dummy_in_a_parameter_is_a_constant(tmp_path):
    """``epsilon(tau)`` of a dummy depends only on its type (issue 27, 11)."""
    path = tmp_path / "k.f90"
    path.write_text(TYPE_DECL.replace("epsilon(tau) + tau", "epsilon(tau)"))
    res = CliRunner().invoke(main, ["translate", str(path)])
    assert res.exit_code == 0, res.output
    # (2**-23) ** (1/4), as gfortran folds it
    assert "(x[i - 1] < 0.01858136f)" in (tmp_path / "k.cl").read_text()
