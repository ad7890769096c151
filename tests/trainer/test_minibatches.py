"""Mini-batches of the PPO update hold whole groups, in a seeded shuffled order."""

from __future__ import annotations

import torch

from trainer.training.update import iterate_minibatches


def draw(group_index: list[int], mini: int, epochs: int, seed: int) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed)
    groups = torch.tensor(group_index)
    return [rows.tolist() for rows in iterate_minibatches(groups, mini, epochs, generator)]


def test_every_row_once_per_epoch_with_the_rows_of_a_group_together() -> None:
    group_index = [g for g in range(6) for _ in range(4)]  # 6 groups of 4 rows

    batches = draw(group_index, mini=8, epochs=2, seed=0)

    assert [len(b) for b in batches] == [8, 8, 8] * 2
    for epoch in (batches[:3], batches[3:]):
        rows = [r for b in epoch for r in b]
        assert sorted(rows) == list(range(24))
        for b in epoch:  # two whole groups per mini-batch
            groups = [group_index[r] for r in b]
            assert len(set(groups)) == 2
            assert all(groups.count(g) == 4 for g in set(groups))


def test_the_group_order_is_shuffled_and_seeded() -> None:
    group_index = [g for g in range(8) for _ in range(2)]

    def order(seed: int) -> list[int]:
        rows = draw(group_index, mini=16, epochs=1, seed=seed)[0]
        return [group_index[r] for r in rows[::2]]

    assert order(1) == order(1)
    assert len({tuple(order(seed)) for seed in range(4)}) > 1
    assert all(sorted(order(seed)) == list(range(8)) for seed in range(4))


def test_groups_need_not_be_numbered_in_row_order() -> None:
    group_index = [2, 0, 2, 1, 0, 1]

    rows = draw(group_index, mini=6, epochs=1, seed=3)[0]

    groups = [group_index[r] for r in rows]
    assert groups[0::2] == groups[1::2]  # each group's two rows are adjacent
    assert sorted(rows) == list(range(6))
