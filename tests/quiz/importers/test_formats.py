"""Each format's importer, called directly on real files in that format's published layout."""

from quiz import importers
from quiz.importers import aiken, gift, kahoot, moodle_xml, quizizz
from quiz.validation import QuestionData
from tests.quiz.importers.conftest import FILES, kahoot_rows, xlsx


def reasons(result) -> dict[int, str]:
    return {error.line: error.reason for error in result.errors}


def test_kahoot_template_is_read_from_its_header_row(kahoot_file):
    result = kahoot.parse(kahoot_file)
    assert result.questions == [
        QuestionData(
            text="What is the capital of Australia?",
            options=("Sydney", "Canberra", "Melbourne", "Perth"),
            correct_index=1,
            seconds=20,
        ),
        QuestionData(
            text="Which of these are prime numbers?",
            options=("2", "3", "4", "9"),
            correct_index=0,
            kind="multi",
            key={"correct_indexes": [0, 1]},
            seconds=30,
        ),
        QuestionData(
            text="The Sun is a star.", options=(), correct_index=0, kind="true_false", key={"answer": True}, seconds=10
        ),
        QuestionData(text="Pick the vowel", options=("b", "a"), correct_index=1, seconds=5),
    ]
    # The header is on row 8 of the template; the question with no correct answer is row 12, named with its text.
    assert reasons(result) == {
        12: "“Which ocean is the largest?”: no correct answer is marked (Correct answer(s) is empty or names no answer)"
    }
    assert result.errors[0].where == "row 12"


def test_kahoot_table_is_found_wherever_the_header_is():
    rows = [["Notes from my colleague"], ["more notes"], *kahoot_rows([["2 + 2?", "3", "4", None, None, 240, 2]])[7:]]
    result = kahoot.parse(xlsx(rows))
    assert [(q.text, q.options, q.correct_index, q.seconds) for q in result.questions] == [
        ("2 + 2?", ("3", "4"), 1, 240)
    ]


def test_quizizz_template_kinds_times_and_image_links(quizizz_file):
    result = quizizz.parse(quizizz_file)
    got = [(q.kind, q.text, q.options, dict(q.key), q.explanation, q.seconds) for q in result.questions]
    assert got == [
        ("single", "Capital of Spain?", ("Lisbon", "Madrid", "Rome"), {}, "Since 1561.", 30),
        ("multi", "Which are fruits?", ("Apple", "Carrot", "Pear"), {"correct_indexes": [0, 2]}, "", 45),
        ("typed", "Chemical symbol of gold?", (), {"answers": ["Au"]}, "", 20),
        ("poll", "Your favourite season?", ("Spring", "Summer", "Autumn", "Winter"), {}, "", 20),
    ]
    assert result.questions[0].correct_index == 1
    assert set(reasons(result)) == {6, 7}
    assert "“Describe your weekend.”" in reasons(result)[6] and "open-ended" in reasons(result)[6]
    # The picture link is named and not fetched: the question came without a picture.
    assert result.questions[2].image is None
    assert len(result.notes) == 1 and result.notes[0].line == 4
    assert "https://example.org/gold.png" in result.notes[0].reason and "not fetched" in result.notes[0].reason


def test_moodle_xml_every_kind_and_the_unplayable_named():
    result = moodle_xml.parse((FILES / "moodle_sample.xml").read_bytes())
    assert result.title == "Capitals"  # its category
    first, primes, sun, mars, moon, _welcome = result.questions
    assert (first.kind, first.text, first.options, first.correct_index) == (
        "single",
        "What is the capital of Australia?",  # HTML made plain
        ("Sydney", "Canberra", "Melbourne"),
        1,
    )
    assert first.explanation == "Canberra was chosen as a compromise between Sydney & Melbourne."
    # The embedded base64 picture went through the picture pipeline, its alt text kept.
    assert first.image is not None and first.image.alt == "The flag of Australia"
    assert first.image.name.endswith(".png") and first.image.content.startswith(b"\x89PNG")
    assert (primes.kind, dict(primes.key)) == ("multi", {"correct_indexes": [0, 1]})
    assert (sun.kind, dict(sun.key)) == ("true_false", {"answer": True})
    assert (mars.kind, dict(mars.key)) == ("typed", {"answers": ["Mars", "planet Mars"]})
    assert moon.kind == "number" and moon.key["answer"] == 1969 and moon.key["tolerance"] == 1
    assert moon.key["min"] < 1969 - 1 and moon.key["max"] > 1969 + 1 and moon.key["max"] - moon.key["min"] <= 1000
    errors = reasons(result)
    assert set(errors) == {7, 8, 9}
    # A description (a page of text) comes in as a slide: its name the title, its text under it.
    welcome = next(q for q in result.questions if q.kind == "slide")
    assert (welcome.text, welcome.explanation) == ("Welcome page", "Welcome to the capitals quiz!")
    assert errors[7].startswith("“Why capitals move”: an essay")
    assert errors[8] == "“Match the capitals”: a matching question cannot be played here"
    assert errors[9].startswith("“Nothing right”: no answer is worth any marks")


def test_gift_types_feedback_escapes_and_comments():
    result = gift.parse((FILES / "gift_sample.gift").read_bytes())
    assert result.title == "Science"
    by_text = {q.text: q for q in result.questions}
    water = by_text["What is the chemical formula of water?"]
    assert (water.options, water.correct_index) == (("H2O", "CO2", "NaCl"), 0)
    assert water.explanation == "Water is H{2}O written plainly: H2O."  # general feedback, escapes undone
    assert by_text["The Earth is round."].key == {"answer": True}
    assert by_text["The Earth is flat."].key == {"answer": False}
    assert by_text['Who wrote "Romeo and Juliet"?'].key == {
        "answers": ["Shakespeare", "William Shakespeare", "W. Shakespeare"]
    }
    assert by_text["Which of these are prime?"].key == {"correct_indexes": [0, 1]}
    pi = by_text["What is pi to two decimals?"]
    assert (pi.kind, pi.key["answer"], pi.key["tolerance"]) == ("number", 3.14, 0.005)
    assert pi.key["min"] < 3.135 and pi.key["max"] > 3.145
    span = by_text["Pick a number from 1 to 5."]
    assert (span.key["answer"], span.key["tolerance"]) == (3, 2)
    escapes = by_text['Which sign means "equals": = or ~?']
    assert escapes.options == ("=", "~", "#")
    assert "Mahatma Gandhi's birthday is an _____ holiday in India." in by_text
    errors = reasons(result)
    assert errors[31] == "“Matching”: a matching question cannot be played here"
    assert "essay" in errors[37]
    assert 41 not in errors  # a description: a slide, not an error
    slide = by_text["A plain description line without any answers."]
    assert (slide.kind, slide.explanation) == ("slide", "A plain description line without any answers.")
    assert errors[43] == "“Broken”: the brace opened on line 43 is never closed"
    assert len(result.questions) == 10


def test_aiken_questions_and_bad_answers_named_by_line():
    result = aiken.parse((FILES / "aiken_sample.txt").read_bytes())
    assert [(q.text, q.options, q.correct_index) for q in result.questions] == [
        ("What is the capital of France?", ("Lyon", "Paris", "Nice"), 1),
        ("Which gas do plants take in?", ("Oxygen", "Nitrogen", "Carbon dioxide", "Helium"), 2),
    ]
    assert reasons(result) == {
        14: "“Which of these is a mammal?”: ANSWER: E names no option of this question",
        19: "“Is this question missing its answer?”: the question has no ANSWER: line",
    }


def test_the_format_is_recognised_from_content_and_name(kahoot_file, quizizz_file):
    def name_of(name, raw):
        return importers.format_of(name, raw).name

    assert name_of("my quiz.xlsx", kahoot_file) == "kahoot"
    assert name_of("upload", kahoot_file) == "kahoot"
    assert name_of("whatever.xlsx", quizizz_file) == "quizizz"
    assert name_of("bank.xml", (FILES / "moodle_sample.xml").read_bytes()) == "moodle_xml"
    assert name_of("", (FILES / "moodle_sample.xml").read_bytes()) == "moodle_xml"
    assert name_of("questions.txt", (FILES / "gift_sample.gift").read_bytes()) == "gift"
    assert name_of("", (FILES / "aiken_sample.txt").read_bytes()) == "aiken"
    assert name_of("round.json", b'{"questions": []}') == "json"
    assert name_of("round.csv", b"question,option_a,option_b,correct\n") == "csv"
    assert name_of("", b"question,option_a,option_b,correct\nSky?,Blue,Green,A\n") == "csv"
    # Pasted text goes the same way.
    pasted = importers.read_pasted((FILES / "aiken_sample.txt").read_text())
    assert pasted.format_label == "Aiken" and len(pasted.questions) == 2
