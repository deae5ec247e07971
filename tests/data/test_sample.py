"""The shipped sample carries every task's gold, honestly labelled as written for the project."""

from __future__ import annotations

from collections import Counter

from attunebench.data import load_taxonomy
from attunebench.data.sample import sample_path
from attunebench.data.stats import compute_stats
from attunebench.data.validate import load_validated
from registered import gold_stats


def test_sample_is_shipped_valid_and_honest() -> None:
    conversations = load_validated(sample_path())
    assert 10 <= len(conversations) <= 15
    for conversation in conversations:
        assert conversation.source.kind == "sample"
        assert conversation.taxonomy_id == "attunebench-default"
        assert "not real participants" in (conversation.source.notes or "")
        assert set(conversation.source.provenance.values()) == {"illustrative"}
        assert 3 <= len(conversation.turns) <= 6


def test_sample_covers_every_task_and_label() -> None:
    conversations = load_validated(sample_path())
    stats = gold_stats(conversations)
    emotion, preference, response = (stats.gold[t] for t in ("emotion", "preference", "response"))
    assert emotion["turns_with_state"] and emotion["conversations_with_context_emotion"]
    assert stats.gold["behavior"]["responses_with_behaviors"] == stats.responses
    assert preference["picks"] and preference["ties"] and preference["rating_pairs_within_turns"]
    assert response["with_wanted_text"] and response["with_wanted_behaviors"]
    assert stats.coverage.panas > 0
    taxonomy = load_taxonomy("attunebench-default")
    assert set(stats.emotions) == taxonomy.emotion_names()
    assert set(stats.behaviors) == taxonomy.behavior_names()
    assert stats.participants < stats.conversations  # someone held more than one conversation
    assert {"age_band", "gender"} <= set(stats.traits)


def test_sample_picks_are_not_predicted_by_position_or_writer() -> None:
    stats = compute_stats(load_validated(sample_path()))
    picks = sum(stats.pick_position.values())
    assert len(stats.picks_by_model) >= 2
    assert max(stats.picks_by_model.values()) <= 0.6 * picks
    assert max(stats.pick_position.values()) <= 0.6 * picks


def test_sample_turns_are_consistent() -> None:
    models: Counter[str] = Counter()
    for conversation in load_validated(sample_path()):
        for turn in conversation.turns:
            models.update(r.model or "" for r in turn.responses)
            assert len({r.model for r in turn.responses}) == len(turn.responses)
            preference = turn.preference
            if preference is not None and preference.chosen is not None:
                assert turn.continued == preference.chosen
                chosen = turn.response(preference.chosen)
                assert chosen is not None and chosen.rating is not None
                # The participant rated the reply they chose at least as highly as the others.
                assert all(chosen.rating >= (r.rating or 0) for r in turn.responses)
            else:
                assert turn.continued == turn.responses[0].id
            if preference is not None and preference.tie:
                assert len({r.rating for r in turn.responses}) == 1
    assert set(models) == {"sample-writer-a", "sample-writer-b"}
