"""ResumableSampler: deterministic epochs, and a resumed run sees the same next batches."""

from __future__ import annotations

import pytest

from trainer.data.sampler import ResumableSampler


def take(sampler: ResumableSampler, k: int) -> list[list[int]]:
    return [sampler.next_batch() for _ in range(k)]


def test_each_epoch_is_a_seeded_permutation() -> None:
    sampler = ResumableSampler(10, 5, shuffle=True, seed=7)

    first, second = list(sampler), list(sampler)

    assert sorted(i for batch in first for i in batch) == list(range(10))
    assert sorted(i for batch in second for i in batch) == list(range(10))
    assert first != second  # a new order each epoch
    assert first == list(ResumableSampler(10, 5, shuffle=True, seed=7))
    assert first != list(ResumableSampler(10, 5, shuffle=True, seed=8))


def test_a_resumed_sampler_continues_with_the_same_batches() -> None:
    uninterrupted = take(ResumableSampler(23, 4, seed=3), 14)  # crosses two epoch ends

    for k in (0, 3, 5, 6, 11):
        before = ResumableSampler(23, 4, seed=3)
        take(before, k)
        state = before.state_dict()
        resumed = ResumableSampler(23, 4, seed=3)
        resumed.load_state_dict(state)

        assert take(resumed, 14 - k) == uninterrupted[k:]


def test_drop_last_decides_the_steps_per_epoch() -> None:
    assert ResumableSampler(10, 4).steps_per_epoch == 2
    keep_last = ResumableSampler(10, 4, shuffle=False, drop_last=False)
    assert keep_last.steps_per_epoch == 3
    assert list(keep_last) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_the_state_counts_handed_out_batches() -> None:
    sampler = ResumableSampler(8, 2, seed=0)
    take(sampler, 3)
    assert sampler.state_dict() == {"epoch": 0, "position": 3}
    take(sampler, 1)
    assert sampler.state_dict() == {"epoch": 1, "position": 0}


def test_it_rejects_a_state_from_another_dataset_and_too_small_data() -> None:
    sampler = ResumableSampler(8, 2)
    with pytest.raises(ValueError, match="position 9 is outside"):
        sampler.load_state_dict({"epoch": 0, "position": 9})
    with pytest.raises(ValueError, match="lower data.train_batch_size"):
        ResumableSampler(3, 4)
