"""A run's own store failing like storage: a full disk (a real tmpfs) or an object store that is gone
stops new work in one line, with what was paid for kept, and a rerun stores it without paying again;
a rerun also stores what its store lost since; a bucket that does not exist is refused, never made."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest
import s3fs

import imagekit
from imagekit.ownership import MANIFEST
from imagekit.workflows.batches.journals.local import LocalJournal
from tests.disk import fill, mount_tmpfs, unmount
from tests.helpers import balance
from tests.utils.service import server_images

PROMPTS = [f"a paper boat {i}" for i in range(6)]


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A real 8 MB file system (tmpfs) for a run's folder and journal."""
    mount_tmpfs(tmp_path / "disk", "8m")
    try:
        yield tmp_path / "disk"
    finally:
        unmount(tmp_path / "disk")


def test_a_full_disk_stops_new_work_by_name_and_a_rerun_stores_what_was_paid_without_paying_again(connect, box,
                                                                                                    tiny_disk):
    ik = connect()
    style = ik.styles()[0]
    out, journal = tiny_disk / "run", tiny_disk / "journal.sqlite"
    before = balance(ik)
    first = ik.batch(PROMPTS[:1], style=style).run(out_dir=out, journal=journal, progress=False)
    assert first.stopped is None
    filler = fill(tiny_disk, leave=48 * 1024)  # room for a little of the rest, not for all of it

    stopped = ik.batch(PROMPTS, style=style).run(out_dir=out, journal=journal, progress=False)  # no exception
    assert stopped.stopped is not None and "full" in stopped.stopped and str(tiny_disk) in stopped.stopped
    made = server_images(box, ik.user_id)
    assert before - balance(ik) == pytest.approx(len(made) * style.credit_cost)  # paid for what was made, no more
    assert len(made) < len(PROMPTS)  # it stopped taking new rows

    filler.unlink()
    again = ik.batch(PROMPTS, style=style).run(out_dir=out, journal=journal, progress=False)
    assert again.stopped is None
    frame = again.to_pandas()
    assert set(frame["row_status"]) == {"done"} and all(Path(file).is_file() for file in frame["file"])
    assert len(server_images(box, ik.user_id)) == len(PROMPTS)  # none made twice
    assert before - balance(ik) == pytest.approx(len(PROMPTS) * style.credit_cost)


def test_a_rerun_stores_again_what_the_folder_lost_and_into_a_new_folder_without_paying(connect, tmp_path):
    ik = connect()
    style = ik.styles()[0]
    journal = tmp_path / "journal.sqlite"
    first = ik.batch(PROMPTS[:4], style=style).run(out_dir=tmp_path / "a", journal=journal, progress=False)
    spent = balance(ik)
    files = sorted(first.to_pandas()["file"])
    for lost in files[:2]:
        Path(lost).unlink()

    again = ik.batch(PROMPTS[:4], style=style).run(out_dir=tmp_path / "a", journal=journal, progress=False)
    assert sorted(again.to_pandas()["file"]) == files and all(Path(file).is_file() for file in files)
    moved = ik.batch(PROMPTS[:4], style=style).run(out_dir=tmp_path / "b", journal=journal, progress=False)
    elsewhere = sorted(moved.to_pandas()["file"])
    assert [Path(file).parent for file in elsewhere] == [tmp_path / "b"] * 4
    assert all(Path(file).is_file() for file in elsewhere)
    reread = LocalJournal(journal)  # the journal says where the images are now
    assert sorted(image["file"] for entry in reread.load().values() for image in entry.images) == elsewhere
    reread.close()
    assert balance(ik) == spent


def test_a_bucket_that_does_not_exist_is_refused_in_one_line_and_never_made(connect, s3):
    ik = connect()
    before = balance(ik)
    missing = s3.bucket() + "-typo"
    with pytest.raises(imagekit.StorageUnavailableError, match=rf"s3://{missing} does not exist") as refused:
        ik.batch(["a kite"], style=ik.styles()[0]).run(out_dir=f"s3://{missing}/runs", progress=False)
    assert "\n" not in str(refused.value)
    assert not s3fs.S3FileSystem(skip_instance_cache=True).exists(missing)
    assert balance(ik) == before


@pytest.mark.parametrize("box", ["extended"], indirect=True)  # the store's fault: each on one face, both met
def test_an_object_store_that_goes_away_stops_the_run_naming_it_and_a_rerun_stores_the_rest(connect, box, s3,
                                                                                              tmp_path):
    """The store stops answering between runs' parts: here its server is stopped after the first
    run's files are stored (its objects go with it: a bucket that lost every file), then started
    again; the run in between stops at once, and the last one stores everything without paying."""
    from tests.objectstore import MotoServer

    ik = connect()
    style = ik.styles()[0]
    journal = tmp_path / "journal.sqlite"
    with MotoServer() as own, pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ENDPOINT_URL", own.endpoint)
        s3fs.S3FileSystem.clear_instance_cache()  # s3fs keeps a client per options, made with the endpoint of its time
        try:
            bucket = own.bucket()
            out = f"s3://{bucket}/boats"
            before = balance(ik)
            ik.batch(PROMPTS[:3], style=style).run(out_dir=out, journal=journal, progress=False)
            own.stop()
            with pytest.raises(imagekit.StorageUnavailableError, match=rf"s3://{bucket}") as gone:
                ik.batch(PROMPTS, style=style).run(out_dir=out, journal=journal, progress=False)
            assert "\n" not in str(gone.value)
            assert before - balance(ik) == pytest.approx(3 * style.credit_cost)  # the run that met it paid nothing

            own.start()  # the same address, an empty store: the bucket is made again, its files are gone
            own.make_bucket(bucket)
            last = ik.batch(PROMPTS, style=style).run(out_dir=out, journal=journal, progress=False)
            frame = last.to_pandas()
            assert set(frame["row_status"]) == {"done"}
            fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
            assert sorted(path.rsplit("/", 1)[-1] for path in fs.ls(f"{bucket}/boats", detail=False)) == \
                sorted([MANIFEST, *(file.rsplit("/", 1)[-1] for file in frame["file"])])  # made again with the files
            assert before - balance(ik) == pytest.approx(len(PROMPTS) * style.credit_cost)
            assert len(server_images(box, ik.user_id)) == len(PROMPTS)
        finally:
            s3fs.S3FileSystem.clear_instance_cache()


@pytest.mark.parametrize("box", ["spec-exact"], indirect=True)
def test_an_object_store_killed_mid_run_stops_it_naming_the_store_and_a_rerun_pays_nothing_twice(connect, box, s3,
                                                                                                   tmp_path):
    """moto SIGKILLed as soon as the run's first image is stored, with rows still to make (every
    request takes 0.5 s, one row at a time): the run stops new work and says why in one line naming
    the store (``batch.stopped``; no botocore error raised), the rows made are paid once and kept in
    the journal, and a rerun on
    the store back again stores every image without paying for any twice."""
    import threading

    from tests.helpers import control, wait_until
    from tests.objectstore import MotoServer

    ik = connect()
    style = ik.styles()[0]
    journal, prompts = tmp_path / "journal.sqlite", PROMPTS[:4]
    with MotoServer() as own, pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ENDPOINT_URL", own.endpoint)
        s3fs.S3FileSystem.clear_instance_cache()
        try:
            bucket = own.bucket()
            out, before, outcome = f"s3://{bucket}/boats", balance(ik), {}
            look = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)

            def run() -> None:
                try:
                    outcome["batch"] = ik.batch(prompts, style=style).run(out_dir=out, journal=journal, progress=False,
                                                                          concurrency=1)
                except Exception as exc:  # noqa: BLE001  (it must not raise: said below, if it did)
                    outcome["raised"] = exc

            control(box, "POST", "faults", {"latency": 0.5})
            running = threading.Thread(target=run)
            running.start()
            wait_until(lambda: any(p.endswith(".png") for p in look.ls(f"{bucket}/boats", detail=False))
                       if look.exists(f"{bucket}/boats") else False, timeout=120, what="the first image stored")
            own.stop(kill=True)
            running.join(timeout=300)
            control(box, "DELETE", "faults")
            assert "raised" not in outcome, repr(outcome.get("raised"))  # stopped, as a full disk stops it
            stopped = outcome["batch"].stopped
            assert stopped is not None and stopped.startswith(f"s3://{bucket}/boats: ") and "\n" not in stopped
            with closing(LocalJournal(journal)) as kept:
                made = [entry for entry in kept.load().values() if entry.image_ids]
            paid = before - balance(ik)
            assert 1 <= len(made) < len(prompts) and paid == pytest.approx(len(made) * style.credit_cost)

            own.start()  # back, empty: the bucket is made again and the rerun stores what is missing
            own.make_bucket(bucket)
            last = ik.batch(prompts, style=style).run(out_dir=out, journal=journal, progress=False)
            assert set(last.to_pandas()["row_status"]) == {"done"}
            stored = [p for p in look.ls(f"{bucket}/boats", detail=False, refresh=True) if p.endswith(".png")]
            assert len(stored) == len(prompts)
            assert before - balance(ik) == pytest.approx(len(prompts) * style.credit_cost)
            assert len(server_images(box, ik.user_id)) == len(prompts)
        finally:
            control(box, "DELETE", "faults")
            s3fs.S3FileSystem.clear_instance_cache()
