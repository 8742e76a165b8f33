"""The report's transcripts show what each item sent (`request`) and got back (`reply`),
shared texts put back, a chat's turns each with their own new messages."""

from __future__ import annotations

from mindprobe.report.transcripts import conversation

SHARED = "A long excerpt quoted by several questions. " * 12


def test_a_record_shows_its_request_params_and_reply():
    rec = {"id": "1", "request": {"prompt": ["<user>", {"sha256": "ab"}, " Which first?"],
                                  "params": {"max_tokens": 1, "temperature": 0.0,
                                             "logprobs": 20}},
           "reply": "A", "answer": "A"}
    html = conversation(rec, {"ab": SHARED})
    assert SHARED.strip() in html and "Which first?" in html
    assert "max_tokens 1" in html and "logprobs 20" in html
    assert html.index("Which first?") < html.index(">A<")


def test_reasks_and_chat_turns_show_only_new_messages():
    rec = {"id": "2", "reply": "good", "request": [
        {"messages": [{"role": "user", "content": "q?"}], "params": {}, "reply": "bad"},
        {"history": 2, "messages": [{"role": "user", "content": "again <b>"}], "params": {},
         "reply": "good"}]}
    html = conversation(rec)
    assert html.count("q?") == 1 and "after the 2 earlier message(s)" in html
    assert "again &lt;b&gt;" in html and html.index(">bad<") < html.index(">good<")
    chat = {"id": "3", "transcript": [
        {"turn": 1, "reply": "no", "answer": "no", "request": {
            "messages": [{"role": "system", "content": {"sha256": "ab"}},
                         {"role": "user", "content": "MAIN TASK - apple"}], "params": {}}},
        {"turn": 2, "reply": "yes", "answer": "yes", "request": {
            "history": 3, "messages": [{"role": "user", "content": "MAIN TASK - pear"}],
            "params": {}}}]}
    html = conversation(chat, {"ab": SHARED})
    assert html.count(SHARED.strip()) == 1 and "apple" in html and "pear" in html


def test_old_records_still_show():
    html = conversation({"id": "4", "messages": [{"role": "user", "content": "hi"}],
                         "raw": ["x", "y"]})
    assert "hi" in html and "after re-ask 1" in html
