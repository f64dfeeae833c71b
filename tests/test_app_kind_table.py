"""The app names a model kind in one place: app/kind_views.py, its presentation table (that no
other module compares a kind's name is tests/test_architecture.py's check). Every kind of the
core has a row, so a new kind is a row, not a search."""


def test_the_table_has_a_row_for_every_kind_of_the_core():
    from tokworkbench.app.kind_views import VIEWS
    from tokworkbench.core.registry.kinds import KINDS

    assert set(VIEWS) == set(KINDS)
