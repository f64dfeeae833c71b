"""Which rows a widget class is asked to draw: what a refresh repainted."""


def drawn_rows(monkeypatch, widget_class, widget_id: str | None = None) -> list[int]:
    """The list `widget_class.render_line` appends each row it draws to (of the widget with
    `widget_id` only, if given); clear it before the key under test."""
    drawn: list[int] = []
    render_line = widget_class.render_line

    def counted(view, y):
        if widget_id is None or view.id == widget_id:
            drawn.append(y)
        return render_line(view, y)

    monkeypatch.setattr(widget_class, "render_line", counted)
    return drawn
