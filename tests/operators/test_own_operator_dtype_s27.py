"""check_on_zeros tries a G on float32 torch q, as training passes it, whatever torch's
default dtype is (a notebook's torch.set_default_dtype(torch.float64))."""

import pytest
import torch

from maxminq.operators import check_on_zeros


def _float32_only_g(q: torch.Tensor) -> torch.Tensor:
    # a matmul with a float32 weight fails on float64 q ("expected both ... same dtype")
    weight = torch.ones(q.shape[-1], 1, dtype=torch.float32)
    return (q @ weight).squeeze(-1).amax(-1)


@pytest.fixture
def float64_default():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


@pytest.mark.usefixtures("float64_default")
def test_the_torch_check_passes_float32_q_under_a_float64_default() -> None:
    seen: list[torch.dtype] = []

    def g(q: torch.Tensor) -> torch.Tensor:
        seen.append(q.dtype)
        return _float32_only_g(q)

    check_on_zeros(g, "operator 'mine'", [(2, 3, 4)], {}, kind="torch")  # no TypeError
    assert seen == [torch.float32]
    # the float64 check of the NumPy kind is unchanged
    with pytest.raises(TypeError, match="operator 'mine' failed"):
        check_on_zeros(_float32_only_g, "operator 'mine'", [(2, 3, 4)], {}, kind="numpy")
