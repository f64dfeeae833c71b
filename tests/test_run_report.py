"""What a run says while it goes and when it ends: a run that reaches its target says so (not
"stopped"), the progress line counts what the run has made by now (not what the report it came
with had), and Unigram's N stops at the target as r does."""

from recording import RecordingApp
from test_app_history import wait_until
from test_app_unigram import course_app, course_files  # noqa: F401  (a fixture)

from tokworkbench.app.labels import describe_stop
from tokworkbench.core.session.session import FinishReason, RunFinished, Session
from tokworkbench.core.session.settings import Settings


def test_the_stop_line_names_why_the_run_stopped():
    assert describe_stop(RunFinished(FinishReason.TARGET, 744)) == "reached the target: 744 merges in this run"
    assert describe_stop(RunFinished(FinishReason.CANCELLED, 12, after_cancel=2)) == \
        "cancelled: 12 merges in this run (2 merges after the key)"
    assert describe_stop(RunFinished(FinishReason.EXHAUSTED, 3), "unigram").startswith("nothing left to prune: 3 rounds")
    assert describe_stop(RunFinished(FinishReason.REPLAYED, 5)) == "replayed every merge: 5 merges in this run"


def test_unigram_n_stops_at_the_target_as_a_run_does(course_files):  # noqa: F811
    session = Session.open(course_files, Settings(kind="unigram", algorithm="course", split="metaspace",
                                                  seed_size=300, target=100))
    session.set_target(session.learner.vocab_size - 1)  # one round reaches it
    target = session.settings.target
    assert session.step_many(10) == 1 and session.learner.vocab_size <= target
    assert session.learner.vocab_size > session.learner.base_size  # not pruned down to the characters
    assert session.step_many(10) == 0


async def test_unigram_n_in_the_app_stops_at_the_target_and_says_why(course_files):  # noqa: F811
    app = course_app(course_files, target=100)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.main.session.set_target(app.main.snapshot.vocab_size - 1)
        app.main.refresh_snapshot()
        await pilot.press("N")
        await pilot.pause()
        snap = app.main.snapshot
        assert snap.base_size < snap.vocab_size <= snap.target and snap.steps == 1
        assert "at the target, where N and r stop" in app.said[-1]


async def test_a_run_to_its_target_never_says_stopped():
    app = RecordingApp(settings=Settings(target=600))
    lines = []
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        label = app.main.query_one("#progress-label")
        await pilot.press("r")
        await wait_until(lambda: (lines.append(str(label.render())) or True)
                         and app.main.last_run is not None and not app.main.running)
        assert app.main.last_run.reason is FinishReason.TARGET
        assert not any(line.startswith("stopped") for line in lines)
        assert app.said[-1].startswith("reached the target")
