"""Small modal dialogs: confirm, ask for a line of text, show a long text."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Button, Input, Label, Static

from tui.sanitize import clean

DIALOG_CSS = """
ModalScreen { align: center middle; }
#dialog {
    width: 72; max-width: 95%; height: auto; max-height: 90%;
    padding: 1 2; border: thick $primary; background: $surface;
}
#dialog Label { width: 1fr; margin-bottom: 1; }
#dialog .buttons { height: auto; align-horizontal: right; margin-top: 1; }
#dialog Button { margin-left: 1; }
#dialog .problem { color: $error; height: auto; }
"""


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel"), Binding("y", "dismiss(True)", "Yes", show=False)]

    def __init__(self, question: str, confirm: str = "Delete") -> None:
        super().__init__()
        self.question = question
        self.confirm = confirm

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="no")
                yield Button(self.confirm, variant="error", id="yes")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line; Enter accepts, Esc cancels. ``problem`` shows an inline error."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, question: str, value: str = "", *, placeholder: str = "",
                 suggester: Suggester | None = None, problem: str = "",
                 select_all: bool = True) -> None:
        super().__init__()
        self.select_all = select_all
        self.question = question
        self.value = value
        self.placeholder = placeholder
        self.suggester = suggester
        self.problem = problem

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, markup=False)
            yield Input(self.value, placeholder=self.placeholder, suggester=self.suggester, id="answer",
                        select_on_focus=self.select_all)
            yield Static(self.problem, markup=False, classes="problem", id="problem")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)


class TextScreen(ModalScreen[None]):
    """A long read-only text (a source, the help), scrollable, Esc closes."""

    DEFAULT_CSS = DIALOG_CSS + """
    TextScreen #dialog { width: 100; height: 90%; }
    TextScreen VerticalScroll { height: 1fr; }
    """
    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, title: str, body: str, *, markdown: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown

        with Vertical(id="dialog"):
            yield Label(clean(self.title_text), markup=False)
            with VerticalScroll():
                if self.markdown:
                    yield Markdown(self.body)
                else:
                    yield Static(clean(self.body), markup=False)


class ChoiceScreen(ModalScreen[str | None]):
    """Pick one of a few actions: (key, label) pairs; Esc cancels."""

    DEFAULT_CSS = DIALOG_CSS + """
    ChoiceScreen OptionList { height: auto; max-height: 16; border: none; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, question: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.question = question
        self.choices = choices

    def compose(self) -> ComposeResult:
        from textual.widgets import OptionList
        from textual.widgets.option_list import Option

        with Vertical(id="dialog"):
            yield Label(self.question, markup=False)
            yield OptionList(*(Option(label, id=key) for key, label in self.choices), id="choices")

    def on_mount(self) -> None:
        self.query_one("#choices").focus()

    def on_option_list_option_selected(self, event) -> None:
        self.dismiss(event.option.id)
