"""`settle`: the live objects leave the cyclic collector's walks, and an earlier set-aside can be dropped."""

from tokworkbench.core import heap


def test_settle_sets_the_live_objects_aside_and_can_drop_the_old_ones():
    import gc

    try:
        heap.settle()
        assert gc.get_freeze_count() > 0
        held = [[n] for n in range(100)]
        heap.settle(drop_old=True)  # the earlier set-aside is walked again, then all set aside
        assert gc.get_freeze_count() >= len(held)
    finally:
        gc.unfreeze()
