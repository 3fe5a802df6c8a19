"""A create's price from its images' metadata (``Ledger.price_create``): it fills an unknown figure and
corrects a reconciled share, never a figure the answer reported or one priced already."""

from __future__ import annotations

from imagekit.ledger import Entry, Ledger, Source, Status


def test_a_create_is_priced_unless_its_answer_said(either_ledger):
    ledger = Ledger(either_ledger, account="acct")
    made = {}
    for group, credits, source in [("unknown", None, None), ("reconciled", 0.0, Source.RECONCILED),
                                   ("reported", 4.0, Source.REPORTED), ("priced", 2.0, Source.PRICED)]:
        made[group] = ledger.record(Entry(operation="create", status=Status.ANSWERED, group_id=group, image_ids=[1],
                                          credits=credits, source=source, tags={}))
    lost = ledger.record(Entry(operation="create", status=Status.NO_RESPONSE, group_id="unknown", tags={}))
    theirs = ledger.record(Entry(operation="create", status=Status.ANSWERED, group_id="unknown", image_ids=[1],
                                 account="other", tags={}))
    for group in made:
        ledger.price_create(group, 3.0)
    found = {entry.uid: (entry.credits, entry.source) for entry in ledger.entries(account="")}
    assert {group: found[entry.uid] for group, entry in made.items()} == {
        "unknown": (3.0, Source.PRICED), "reconciled": (3.0, Source.PRICED),
        "reported": (4.0, Source.REPORTED), "priced": (2.0, Source.PRICED)}
    assert found[lost.uid] == (None, None)  # the answer that never came: its images are the recovered entry's
    assert found[theirs.uid] == (None, None)  # another account's group of the same name
