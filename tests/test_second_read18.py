"""Second reading of session 18's deep and classic commits (h6).

* ``nets``: a seed's gradient in a multi-seed update is its own: the hand-written
  backward's products go per seed where one product for all would round by position (a
  mini-batch of one row on one thread, of 5 rows on two), and one row times a transposed
  weight matrix no longer rounds by where the seed's weights lie in the stacked parameters.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maxminq.deep.nets import build_net
from maxminq.deep.policy import torch_threads


def _grads_alone_and_among(
    network: str, obs: tuple[int, ...], rows: int, threads: int, nets_per_seed: int
) -> None:
    """Each seed's loss_and_grad among 3 seeds (``nets_per_seed`` nets each) equals the
    seed's alone, the alone net's parameters and batch in tensors of their own (as in a run
    of that seed)."""
    seeds, actions = 3, 6
    gens = [torch.Generator().manual_seed(40 + s) for s in range(seeds)]
    many = build_net(network, seeds * nets_per_seed, obs, actions)
    many.init_members(gens, nets_per_seed)
    data = torch.Generator().manual_seed(3)
    m = seeds * nets_per_seed
    x = torch.rand((m, rows, *obs), generator=data)
    act = torch.randint(0, actions, (m, rows), generator=data)
    y = torch.rand((m, rows), generator=data) * 4.0
    with torch_threads(threads):
        per, q_sa, grad = many.loss_and_grad(many.flat.clone(), x, act, y, "huber", seeds)
        for s in range(seeds):
            own = slice(s * nets_per_seed, (s + 1) * nets_per_seed)
            alone = build_net(network, nets_per_seed, obs, actions)
            alone.init_members([torch.Generator().manual_seed(40 + s)], nets_per_seed)
            p1, q1, g1 = alone.loss_and_grad(
                alone.flat.clone(), x[own].clone(), act[own].clone(), y[own].clone(), "huber"
            )
            assert torch.equal(per[own], p1) and torch.equal(q_sa[own], q1), s
            assert torch.equal(grad[own], g1), (s, (grad[own] != g1).sum().item())


@pytest.mark.parametrize("nets_per_seed", [1, 3])
@pytest.mark.parametrize("network,obs", [("mlp", (4,)), ("minatar_cnn", (4, 10, 10))])
def test_a_seeds_gradient_at_batch_size_one_is_its_own(network, obs, nets_per_seed) -> None:
    """--batch-size 1: dz @ w.T of one row rounded by the weights' alignment in the flat
    parameter rows (seed s's lie s * N * P floats in), so seeds 1, 2 differed from alone."""
    _grads_alone_and_among(network, obs, rows=1, threads=1, nets_per_seed=nets_per_seed)


def test_a_seeds_gradient_on_two_threads_at_an_odd_batch_size_is_its_own() -> None:
    """--threads 2 --batch-size 5: the backward's batched products rounded by position
    (only the forward's were made per seed)."""
    _grads_alone_and_among("mlp", (4,), rows=5, threads=2, nets_per_seed=1)


# --- deep.replay: a uint8 buffer names the value it cannot hold, as given ---------------------


@pytest.mark.parametrize("value,shown", [(255.0000001, "255.0000001"), (3.5, "3.5")])
def test_a_uint8_buffer_names_a_value_that_rounds_to_a_whole_number_as_float32(
    value, shown
) -> None:
    """ReplayBuffers.add with float64 observations (its API takes any array): 255.0000001
    is stored as 255 and differs from it, but fbdf6b9 looked for the difference after a
    float32 cast (255.0 there) and found none: an IndexError instead of the UsageError."""
    from maxminq.deep.replay import ReplayBuffers
    from maxminq.errors import UsageError

    rb = ReplayBuffers(2, 4, (3,), np.dtype(np.uint8))
    obs = np.array([[0.0, 1.0, 2.0], [4.0, value, 6.0]])
    step = (np.array([0, 1]), np.ones(2, np.float32), np.zeros((2, 3)), np.zeros(2, np.float32))
    with pytest.raises(UsageError, match=rf"seed position 1 in --seeds\) holds {shown}, .*uint8"):
        rb.add(obs, step[0], step[1], step[2], step[3])


# --- analysis.report.setting_texts: numbers in order beside an unset value -------------------


def test_setting_texts_keep_numbers_in_numeric_order_beside_unset() -> None:
    """55542b0 sorted numbers numerically only when every value was a number: one run
    leaving the setting unset (None) sorted them all as text again (10 before 2)."""
    from maxminq.analysis.report import setting_texts

    assert setting_texts([10, 2, None, 4]) == ["2", "4", "10", "unset"]
    assert setting_texts([float("nan"), 3.5, 1]) == ["1", "3.5", "nan"]
    assert setting_texts([1500000, 2.0, [64, 64]]) == ["2", "1,500,000", "[64, 64]"]
