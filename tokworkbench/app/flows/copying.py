"""What y and Y copy: the ids or the tokens of the encode box's text, else the selected token's."""

import json

from tokworkbench.app.labels import plural
from tokworkbench.core.inspection.roundtrip import round_trip
from tokworkbench.core.models.protocol import Model


def what_to_copy(model: Model, encode_text: str, selected_token: int | None) -> tuple[list[int], str] | None:
    """The ids to copy and whose they are, or None when there is nothing."""
    rt = round_trip(model, encode_text) if encode_text else None  # the model as it is now
    if rt is not None and rt.ids:
        return rt.ids, "of the encode box"
    if selected_token is not None:
        return [selected_token], "of the selected token"
    return None


def copied_text(model: Model, ids: list[int], what: str) -> str:
    """`what`: "ids", or "tokens" as `tokworkbench encode --format tokens` writes them."""
    if what == "ids":
        return " ".join(map(str, ids))
    return " ".join(json.dumps(model.token_text(i), ensure_ascii=False) for i in ids)


def copied_note(ids: list[int], what: str, where: str) -> str:
    return f"copied {plural(len(ids), 'token' if what == 'tokens' else 'id')} {where}"
