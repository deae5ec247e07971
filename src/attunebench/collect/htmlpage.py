"""What a simulated participant reads off a page of the app: its step, its forms and their
controls, and the two replies on a judging page, so the simulator answers exactly the questions
a study asks, as a person sees them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Control:
    """One form control: an input (of any type), a textarea, a select or a button."""

    kind: str  # the input type; "textarea", "select" or the button's type for the others
    name: str
    value: str = ""
    options: list[str] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Form:
    action: str
    controls: list[Control] = field(default_factory=list)
    text: str = ""  # what the form says, its labels and legends

    def hidden(self) -> dict[str, str]:
        return {c.name: c.value for c in self.controls if c.kind == "hidden"}

    def named(self, name: str) -> list[Control]:
        return [c for c in self.controls if c.name == name]

    def values(self, name: str) -> list[str]:
        """The values a group offers (checkboxes, radios) or the options of a select."""
        found = self.named(name)
        if found and found[0].kind == "select":
            return [o for o in found[0].options if o]
        return [c.value for c in found]

    def has(self, name: str) -> bool:
        return bool(self.named(name))

    def groups(self, kind: str) -> list[str]:
        """Names of the controls of one kind, each once, in page order."""
        return list(dict.fromkeys(c.name for c in self.controls if c.kind == kind and c.name))


@dataclass
class Page:
    step: str | None = None
    forms: list[Form] = field(default_factory=list)
    # The query parameters a recruitment platform's link must carry (the open link's page
    # without them names them: `collect simulate` arrives as the platform would send it).
    platform_params: list[str] = field(default_factory=list)
    replies: dict[str, str] = field(default_factory=dict)

    def form(self, action_end: str) -> Form | None:
        return next((f for f in self.forms if f.action.endswith(action_end)), None)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._form: Form | None = None
        self._text: Control | None = None  # a textarea being read
        self._select: Control | None = None
        self._reply: str | None = None  # "A" or "B" inside a candidate section
        self._prose: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "main" and "data-step" in a:
            self.page.step = a["data-step"]
        elif tag == "main" and "data-platform-params" in a:
            self.page.platform_params = a["data-platform-params"].split()
        elif tag == "form":
            self._form = Form(a.get("action", ""))
            self.page.forms.append(self._form)
        elif tag == "section" and a.get("aria-label", "").startswith("Reply "):
            self._reply = a["aria-label"].removeprefix("Reply ")
        elif tag == "p" and self._reply and "prose" in a.get("class", "").split():
            self._prose = []
        elif self._form is not None and tag in ("input", "button", "textarea", "select"):
            kind = a.get("type", "submit" if tag == "button" else "text")
            kind = tag if tag in ("textarea", "select") else kind
            control = Control(kind, a.get("name", ""), a.get("value", ""), attrs=a)
            self._form.controls.append(control)
            self._text = control if tag == "textarea" else None
            self._select = control if tag == "select" else self._select
        elif tag == "option" and self._select is not None:
            self._select.options.append(a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "textarea":
            self._text = None
        elif tag == "select":
            self._select = None
        elif tag == "section":
            self._reply = None
        elif tag == "p" and self._prose is not None and self._reply:
            self.page.replies[self._reply] = "".join(self._prose).strip()
            self._prose = None

    def handle_data(self, data: str) -> None:
        if self._form is not None:
            self._form.text += data
        if self._text is not None:
            self._text.value += data
        if self._prose is not None:
            self._prose.append(data)


def parse_page(html: str) -> Page:
    """The step, forms and replies of one page of the app.

    >>> page = parse_page('<main data-step="judge:0"><section aria-label="Reply A">'
    ...                   '<p class="prose">Hi?</p></section><form action="/p/t/judge">'
    ...                   '<input type="radio" name="choice" value="A"></form></main>')
    >>> page.step, page.replies, page.forms[0].values("choice")
    ('judge:0', {'A': 'Hi?'}, ['A'])
    """
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.page
