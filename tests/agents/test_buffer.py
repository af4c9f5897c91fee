"""The agent's disk buffer: batches in order, ids kept, bounded, crash-safe files."""

from __future__ import annotations

import stat

from uptime_server.probe_agent.buffer import DiskBuffer


def _results(*ids: int) -> list[dict]:
    return [{"monitor_id": i, "lease_owner": f"agent1-x/{i}", "passed": True} for i in ids]


def test_batches_come_back_in_order_with_their_ids_after_a_restart(tmp_path):
    buffer = DiskBuffer(tmp_path / "buf")
    buffer.add(_results(1, 2, 3), batch_size=2)
    buffer.add(_results(4), batch_size=2)
    before = [(b.batch_id, [r["monitor_id"] for r in b.results]) for b in buffer.batches]

    again = DiskBuffer(tmp_path / "buf")

    after = [(b.batch_id, [r["monitor_id"] for r in b.results]) for b in again.batches]
    assert after == before
    assert [ids for _, ids in after] == [[1, 2], [3], [4]]
    assert len({batch_id for batch_id, _ in after}) == 3
    assert stat.S_IMODE((tmp_path / "buf").stat().st_mode) == 0o700


def test_dropping_some_results_keeps_the_batch_id(tmp_path):
    buffer = DiskBuffer(tmp_path / "buf")
    buffer.add(_results(1, 2), batch_size=10)
    [batch] = buffer.batches

    dropped = buffer.keep_only(batch, lambda r: r["monitor_id"] == 2)

    assert dropped == 1
    [stored] = DiskBuffer(tmp_path / "buf").batches
    assert stored.batch_id == batch.batch_id
    assert [r["monitor_id"] for r in stored.results] == [2]
    assert buffer.keep_only(batch, lambda r: False) == 1
    assert DiskBuffer(tmp_path / "buf").batches == [] and len(buffer) == 0


def test_a_full_buffer_drops_its_oldest_batches_and_counts_them(tmp_path):
    buffer = DiskBuffer(tmp_path / "buf", max_results=3)
    buffer.add(_results(1, 2), batch_size=2)
    buffer.add(_results(3, 4), batch_size=2)

    assert buffer.dropped == 2
    assert [[r["monitor_id"] for r in b.results] for b in buffer.batches] == [[3, 4]]
    assert len(list((tmp_path / "buf").glob("*.json"))) == 1


def test_a_done_batch_leaves_no_file_and_an_unreadable_one_is_set_aside(tmp_path):
    buffer = DiskBuffer(tmp_path / "buf")
    buffer.add(_results(1), batch_size=1)
    [batch] = buffer.batches
    buffer.done(batch)
    (tmp_path / "buf" / "000000000009.json").write_text("{not json")

    again = DiskBuffer(tmp_path / "buf")

    assert again.batches == []
    assert (tmp_path / "buf" / "000000000009.bad").exists()
    assert not batch.path.exists()


def test_a_batch_marked_sent_stays_marked_after_a_restart(tmp_path):
    buffer = DiskBuffer(tmp_path / "buf")
    buffer.add(_results(1, 2), batch_size=1)
    first, second = buffer.batches
    assert not first.sent and not second.sent

    buffer.mark_sent(first)
    again = DiskBuffer(tmp_path / "buf")
    assert [b.sent for b in again.batches] == [True, False]

    buffer.mark_sent(first, False)  # the post surely never left
    assert [b.sent for b in DiskBuffer(tmp_path / "buf").batches] == [False, False]
