"""Any utterance-per-row corpus in CSV (or TSV): columns name the conversation, speaker and text
(the options and their rules: docs/data.md, "Any corpus as CSV").

Rows become conversations and utterances in `_csv_groups`; outcome columns are `_csv_outcome`'s,
label columns go through `_label_sets`. Speaker names are never written into the text (a model
would read them as said). Every label is read through once before anything is written, so all
the labels the taxonomy lacks are refused in one error, whatever `--limit` says.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from attunebench.data.derived import rated_replies
from attunebench.data.importers._base import (
    ImportFormatError,
    ImportOptionError,
    LabelKind,
    Location,
    Tally,
    choose,
    conversation,
    number,
    text,
    unique,
)
from attunebench.data.importers._csv_context import (
    check_rating_scale,
    check_roles,
    context_targets,
    context_values,
    declared_provenance,
)
from attunebench.data.importers._csv_groups import (
    Merge,
    Record,
    Row,
    Ties,
    grouped,
    in_order,
    merge_annotators,
    merge_rule,
)
from attunebench.data.importers._csv_outcome import (
    OutcomeColumns,
    Scale,
    observed_scales,
    scale_option,
)
from attunebench.data.importers._csv_rows import csv_rows, speaker_name
from attunebench.data.importers._dialogue import Utterance, build_dialogue
from attunebench.data.importers._label_sets import (
    Labeller,
    load_label_map,
    taxonomy_option,
)
from attunebench.data.schema import Conversation, Source, Taxonomy
from attunebench.data.taxonomy import DEFAULT_TAXONOMY_ID

# What tasks.outcome and tasks.helpers.pairs read of context.labels.partner.
Partner = Literal["person", "model"]
REPLY_RATINGS = (
    "note:reply ratings made rating items (their conversations rate nothing on user rows)"
)


@dataclass(frozen=True)
class Parts:
    """One conversation, read and labelled, before it is built."""

    key: tuple[str, ...]
    location: Location
    utterances: list[Utterance]
    context: dict[str, Any]
    outcome: dict[str, Any] | None = None


@dataclass(frozen=True)
class CsvImporter:
    # Each field is an option of `data import csv`, its help beside it (cli.options reads it).
    conversation_col: Annotated[
        list[str], "Column naming the conversation; repeat for a composite key."
    ]
    speaker_col: Annotated[str, "Column naming the speaker."]
    text_col: Annotated[str, "Column holding the utterance."]
    emotion_col: Annotated[str | None, "User rows: the user's emotion label(s)."] = None
    behavior_col: Annotated[str | None, "Reply rows: the reply's behavior label(s)."] = None
    rating_col: Annotated[
        str | None, "Reply rows: its rating; user rows: rates the replies since the last one."
    ] = None
    order_col: Annotated[str | None, "Numeric column ordering rows in a conversation."] = None
    annotator_col: Annotated[
        str | None, "Column naming the annotator, where several labelled each utterance."
    ] = None
    keep_duplicate_rows: Annotated[
        bool,
        "Keep rows repeating another's --order-col value as utterances of their own "
        "(without it they are an error: several annotators' rows need --annotator-col).",
    ] = False
    annotator_merge: Annotated[Merge, "How annotators' labels of one utterance merge."] = "majority"
    context_col: Annotated[
        list[str] | None,
        "Conversation-level column: COL (into context.labels), or topic=COL, "
        "situation=COL, emotion=COL; repeat.",
    ] = None
    user_speaker: str | None = None  # an option `data import meld` shares: its help is the CLI's
    taxonomy: Annotated[str, "Shipped taxonomy id, or a taxonomy FILE.json (carried inline)."] = (
        DEFAULT_TAXONOMY_ID
    )
    taxonomy_from_data: Annotated[
        bool, "Build the taxonomy from the corpus's own labels (inline, and beside --out)."
    ] = False
    label_map: Annotated[Path | None, "JSON mapping the corpus's labels onto the taxonomy's."] = (
        None
    )
    name: Annotated[str | None, "Source name and id prefix (default: file stem)."] = None
    license: Annotated[str | None, "The corpus licence, as stated."] = None
    provenance: Annotated[
        list[str] | None,
        "Who gave the labels: WHO for all, or FIELD=WHO (state, behaviors, rating, "
        "context.emotion, outcome); WHO is first-person, actor, third-party, machine, "
        "derived, ...",
    ] = None
    rating_low: Annotated[
        float | None, "Lowest rating on the scale (default: the rating column's lowest)."
    ] = None
    rating_high: Annotated[
        float | None, "Highest rating on the scale (default: the rating column's highest)."
    ] = None
    outcome_col: Annotated[
        list[str] | None,
        "FIELD=COL: the person's answer after the conversation, one value per "
        "conversation; FIELD is rating (their rating of the whole conversation) or a "
        "survey name. Repeat.",
    ] = None
    outcome_scale: Annotated[
        list[str] | None,
        "FIELD=LOW:HIGH: an --outcome-col field's scale (bounds may be negative); "
        "without it, the range its values span. Repeat.",
    ] = None
    outcome_map: Annotated[
        list[str] | None,
        "FIELD=FILE.json: a JSON object mapping an --outcome-col field's words to "
        'numbers ({"Slightly satisfied": 4, ...}); its range is the scale. Repeat.',
    ] = None
    partner: Annotated[
        Partner | None,
        "Who the other side of every chat is: person or model (context.labels.partner).",
    ] = None
    label_sep: Annotated[str, "Separator between labels in one cell."] = ","
    delimiter: Annotated[str, "Field delimiter (TSV: $'\\t', '\\t' or tab)."] = ","

    def __post_init__(self) -> None:
        if isinstance(self.conversation_col, str):  # it would be read letter by letter
            raise TypeError(f"conversation_col is a list of columns: [{self.conversation_col!r}]")

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.conversation_col)

    def _labelled(self) -> dict[str, str]:
        """Provenance field -> the column its labels come from."""
        columns = {
            "state": self.emotion_col,
            "behaviors": self.behavior_col,
            "rating": self.rating_col,
            "context.emotion": dict(context_targets(self.context_col or ())).get("emotion"),
            "outcome": ", ".join(self._outcome.columns.values()),
        }
        return {labelled: column for labelled, column in columns.items() if column}

    @cached_property
    def _outcome(self) -> OutcomeColumns:
        return OutcomeColumns.parse(
            self.outcome_col or (), self.outcome_scale or (), self.outcome_map or ()
        )

    def _source(self, path: Path, taxonomy_id: str, origin: str) -> Source:
        user = repr(self.user_speaker) if self.user_speaker else "each conversation's first speaker"
        notes = (
            f"Imported from {path.name}: one utterance a row, conversations keyed by "
            f"{', '.join(self.keys)}; the user is {user}, other speakers' rows between the user's "
            f"messages are the reply. Labels: taxonomy {taxonomy_id!r} ({origin})."
        )
        if self.annotator_col:
            notes += (
                f" Rows of one utterance by several annotators ({self.annotator_col}) are merged: "
                f"{merge_rule(self.annotator_merge)}."
            )
        scale = (
            None
            if self.rating_col is None or self.rating_low is None
            else {"low": self.rating_low, "high": self.rating_high}
        )
        return Source.model_validate(
            {
                "kind": "imported",
                "name": self.name or path.stem,
                "license": self.license,
                "provenance": declared_provenance(self.provenance, self._labelled()),
                "rating_scale": scale,
                "notes": notes,
            }
        )

    def _labeller(self, source: Path, tally: Tally) -> tuple[Source, Taxonomy, bool, Labeller]:
        """(source record, taxonomy, whether it goes inline, the labeller for the import), once
        the options are checked and every label has been read through."""
        name = self.name or source.stem
        if self.taxonomy_from_data:
            if self.label_map or self.taxonomy != DEFAULT_TAXONOMY_ID:
                raise ImportOptionError(
                    "--taxonomy-from-data builds the taxonomy from the corpus: "
                    "give it without --taxonomy or --label-map"
                )
            taxonomy_id = f"{name}-labels"
            record = self._source(source, taxonomy_id, "built from the corpus's own labels")
            survey = Labeller(None)
            self._survey(source, survey)
            columns: dict[LabelKind, str] = {
                "emotions": self.emotion_col or "",
                "behaviors": self.behavior_col or "",
            }
            taxonomy = survey.taxonomy_of_data(taxonomy_id, name, columns, source)
            return record, taxonomy, True, Labeller(taxonomy, tally=tally)
        taxonomy, inline = taxonomy_option(self.taxonomy)
        mapping = load_label_map(self.label_map, taxonomy) if self.label_map else {}
        origin = f"from {Path(self.taxonomy).name}" if inline else "shipped"
        if self.label_map:
            origin += f", through the label map {self.label_map.name}"
        record = self._source(source, taxonomy.id, origin)
        self._survey(source, Labeller(taxonomy, mapping))
        return record, taxonomy, inline, Labeller(taxonomy, mapping, tally=tally)

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        yield from self._scaled(source, tally)._read(source, tally)

    def _scaled(self, source: Path, tally: Tally) -> CsvImporter:
        """This importer with every scale settled: the rating column's and each outcome
        field's, as given, or else the range its numbers span in the file (said in a note)."""
        check_roles(self.keys, self.speaker_col, self.text_col, self.label_sep)
        check_rating_scale(self.rating_low, self.rating_high)
        self._check_partner()
        wanted = {name: self._outcome.columns[name] for name in self._outcome.unscaled()}
        if self.rating_col and self.rating_low is None:
            wanted[""] = self.rating_col  # the rating column's, under no outcome field's name
        rows = csv_rows(source, self._columns(), self.delimiter) if wanted else iter(())
        settled = self
        for name, (column, scale) in observed_scales(rows, wanted).items():
            option = scale_option(name)
            what = "rating" if not name else f"outcome {name}"
            taken = f"{column} {scale[0]:g}:{scale[1]:g} (to set it: {option})"
            tally[f"note:{what} scale taken from the data: {taken}"] += 1
            settled = settled._with_scale(name, scale)
        return settled

    def _check_partner(self) -> None:
        if self.partner is None:
            return
        choose("--partner", self.partner, get_args(Partner))
        named = [column for target, column in context_targets(self.context_col or ())]
        if "partner" in named:
            raise ImportOptionError(
                "--partner says who the other side is for every conversation: give it or a "
                "partner column (--context-col partner), not both"
            )

    def _with_scale(self, name: str, scale: Scale) -> CsvImporter:
        if not name:
            return replace(self, rating_low=scale[0], rating_high=scale[1])
        spec = f"{name}={scale[0]!r}:{scale[1]!r}"
        return replace(self, outcome_scale=[*(self.outcome_scale or ()), spec])

    def _read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        record_source, taxonomy, inline, labeller = self._labeller(source, tally)
        name = record_source.name
        ids: dict[str, int | None] = {}
        for parts in self._conversations(source, labeller, tally):
            conversation_id = "-".join((name, *parts.key))
            first = ids.setdefault(conversation_id, parts.location.line)
            if first != parts.location.line:
                raise ImportFormatError(
                    parts.location,
                    "/".join(self.keys),
                    f"id {conversation_id!r} is also the id of the conversation on line {first}",
                )
            dialogue = build_dialogue(parts.utterances, reply_id="reply", tally=tally)
            built = conversation(
                parts.location,
                id=conversation_id,
                source=record_source,
                taxonomy=taxonomy if inline else taxonomy.id,
                context={**parts.context, "opening": dialogue.opening},
                turns=dialogue.turns,
                outcome=parts.outcome,
            )
            tally[REPLY_RATINGS] += len(rated_replies(built))
            yield built

    def _survey(self, source: Path, labeller: Labeller) -> None:
        """Read every label once before writing, so an unknown one is refused whatever the limit."""
        if self.emotion_col or self.behavior_col or self._labelled().get("context.emotion"):
            for _ in self._conversations(source, labeller, Counter()):
                pass
            labeller.check()

    def _columns(self) -> list[str]:
        optional = (
            self.emotion_col,
            self.behavior_col,
            self.rating_col,
            self.order_col,
            self.annotator_col,
        )
        context = [column for _, column in context_targets(self.context_col or ())]
        outcome = list(self._outcome.columns.values())
        return [
            *self.keys,
            self.speaker_col,
            self.text_col,
            *filter(None, optional),
            *context,
            *outcome,
        ]

    def _conversations(self, source: Path, labeller: Labeller, tally: Tally) -> Iterator[Parts]:
        matched, speakers_seen = self.user_speaker is None, Counter[str]()
        for group in grouped(csv_rows(source, self._columns(), self.delimiter), self.keys):
            tally["conversations"] += 1
            rows = in_order(
                [self._row(record) for record in group],
                self.order_col,
                ties=self._ties(),
                tally=tally,
            )
            if self.annotator_col is not None:
                how = merge_rule(self.annotator_merge)
                rows = merge_annotators(rows, self.text_col, self.order_col is not None, how, tally)
            speakers_seen.update(row.speaker for row in rows)
            user = self.user_speaker or rows[0].speaker
            if all(row.speaker != user for row in rows):
                tally[f"dropped:conversations without {user}"] += 1
                continue
            matched = True
            yield Parts(
                key=tuple(group[0][1][column].strip() for column in self.keys),
                location=rows[0].location,
                utterances=[
                    self._utterance(row, row.speaker == user, labeller, tally) for row in rows
                ],
                context=self._context(rows, labeller),
                outcome=self._outcome.outcome(group),
            )
        if not matched:
            seen = ", ".join(repr(s) for s, _ in speakers_seen.most_common(8)) or "none"
            raise ImportOptionError(
                f"{source}: --user-speaker {self.user_speaker!r} matches no speaker "
                f"({self.speaker_col} values, most frequent first: {seen})"
            )

    def _context(self, rows: list[Row], labeller: Labeller) -> dict[str, Any]:
        context = context_values(rows, context_targets(self.context_col or ()), labeller)
        if self.partner is not None:
            context["labels"]["partner"] = self.partner
        return context

    def _ties(self) -> Ties:
        """What rows sharing an order value are: annotators' (merged later), kept, or refused."""
        if self.annotator_col is not None:
            return "merge"
        return "keep" if self.keep_duplicate_rows else "refuse"

    def _split(self, values: dict[str, str], column: str | None) -> tuple[str, ...]:
        if column is None:
            return ()
        return tuple(part for part in values[column].split(self.label_sep) if part.strip())

    def _row(self, record: Record) -> Row:
        location, values = record
        return Row(
            location=location,
            values=values,
            speaker=speaker_name(text(values[self.speaker_col], location, self.speaker_col)),
            text=text(values[self.text_col], location, self.text_col),
            emotions=self._split(values, self.emotion_col),
            behaviors=self._split(values, self.behavior_col),
            rating=self._rating(record),
            order=None
            if self.order_col is None
            else number(values[self.order_col], location, self.order_col),
            annotator=None if self.annotator_col is None else values[self.annotator_col].strip(),
        )

    def _rating(self, record: Record) -> float | None:
        location, values = record
        if self.rating_col is None or not values[self.rating_col].strip():
            return None
        value = number(values[self.rating_col], location, self.rating_col)
        low, high = self.rating_low, self.rating_high  # both set: `_source` checks it first
        if low is not None and high is not None and not low <= value <= high:
            raise ImportFormatError(
                location, self.rating_col, f"{value:g} is outside the scale {low:g}-{high:g}"
            )
        return value

    def _names(self, labeller: Labeller, kind: LabelKind, row: Row) -> tuple[str, ...]:
        # A label column not given leaves its labels empty (`_split`): nothing to name.
        column = (self.emotion_col if kind == "emotions" else self.behavior_col) or ""
        labels: tuple[str, ...] = getattr(row, kind)
        return unique(
            [n for raw in labels for n in labeller.names(kind, raw, row.location, column)]
        )

    def _utterance(self, row: Row, is_user: bool, labeller: Labeller, tally: Tally) -> Utterance:
        tally["rows:user" if is_user else "rows:reply"] += 1
        if is_user:
            tally["dropped:behavior labels on user rows"] += len(row.behaviors)
        else:
            tally["dropped:emotion labels on reply rows"] += len(row.emotions)
        return Utterance(
            is_user=is_user,
            text=row.text,
            speaker=row.speaker,
            emotions=self._names(labeller, "emotions", row) if is_user else (),
            behaviors=() if is_user else self._names(labeller, "behaviors", row),
            rating=None if is_user else row.rating,
            feedback=row.rating if is_user else None,
        )
