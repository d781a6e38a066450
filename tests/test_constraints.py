"""gpal.constraints: one vocabulary, one message form, for estimator parameters, function arguments and workflow fields."""

from __future__ import annotations

import numpy as np
import pytest

from gpal.constraints import (
    AnyOf,
    Boolean,
    Integer,
    InvalidParameter,
    ListOf,
    MappingOf,
    OneOf,
    Optional,
    Parsed,
    Real,
    Satisfies,
    Text,
    check_values,
)


@pytest.mark.parametrize("constraint,good,plain,bad,message", [
    (Integer(1), np.int64(3), 3, 0, "n must be an integer >= 1; got 0"),
    (Integer(), -4, -4, True, "n must be an integer; got True"),
    (Real(0, 1, low_open=True), 1, 1.0, 0.0, "n must be a finite number > 0 and <= 1; got 0.0"),
    (Real(meaning="a rate"), 2.5, 2.5, float("nan"), "n must be a finite number (a rate); got nan"),
    (OneOf(("a", "b")), "b", "b", "c", "n must be one of ['a', 'b']; got 'c'"),
    (OneOf((1, 2)), 1, 1, True, "n must be one of [1, 2]; got True"),
    (Boolean(), np.bool_(True), True, 1, "n must be True or False; got 1"),
    (Text(), "x", "x", "", "n must be a non-empty string; got ''"),
    (Optional(Integer(0)), None, None, -1, "n must be None or an integer >= 0; got -1"),
    (AnyOf((OneOf(["auto"]), Integer(1))), 5, 5, "many", "n must be one of ['auto'] or an integer >= 1; got 'many'"),
    (Satisfies(lambda v: v % 2 == 0, "an even number"), 4, 4, "x", "n must be an even number; got 'x'"),
])
def test_each_constraint_says_what_was_expected_and_what_was_given(constraint, good, plain, bad, message):
    assert constraint.ok(good) and not constraint.ok(bad)
    value = constraint.check("n", good)
    assert value == plain and type(value) is type(plain)
    with pytest.raises(InvalidParameter) as info:
        constraint.check("n", bad)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_lists_and_mappings_name_the_item_that_failed():
    methods = ListOf(OneOf(["MGP", "NIMGP"]))
    assert methods.check("methods", ("MGP", "NIMGP")) == ["MGP", "NIMGP"]
    with pytest.raises(InvalidParameter, match=r"^methods\[1\] must be one of \['MGP', 'NIMGP'\]; got 'FOO'$"):
        methods.check("methods", ["MGP", "FOO"])
    with pytest.raises(InvalidParameter, match=r"^methods must hold distinct items; got \['MGP', 'MGP'\]$"):
        methods.check("methods", ["MGP", "MGP"])
    with pytest.raises(InvalidParameter, match=r"^methods must be a list of 1 or more distinct item\(s\)"):
        methods.check("methods", "MGP")
    pair = ListOf(Real(), min_length=2, max_length=2, unique=False)
    assert pair.check("nll", [1, 1]) == [1.0, 1.0]
    with pytest.raises(InvalidParameter, match=r"^nll must be a list of 2 item\(s\), each a finite number; got \[1\]$"):
        pair.check("nll", [1])
    reference = MappingOf(MappingOf(Real(0)), keys=OneOf(["MGP"]))
    assert reference.check("reference", {"MGP": {"nll": 1}}) == {"MGP": {"nll": 1.0}}
    with pytest.raises(InvalidParameter, match=r"^reference\['MGP'\]\['nll'\] must be a finite number >= 0; got -1$"):
        reference.check("reference", {"MGP": {"nll": -1}})
    with pytest.raises(InvalidParameter, match=r"^a key of reference must be one of \['MGP'\]; got 'GP'$"):
        reference.check("reference", {"GP": {}})
    assert not reference.ok({"GP": {}}) and reference.ok({})
    with pytest.raises(InvalidParameter, match=r"^reference\['MGP'\]\['nll'\] must be"):
        Optional(reference).check("reference", {"MGP": {"nll": -1}})


def test_a_parser_keeps_its_own_words():
    def even(value):
        if value % 2:
            raise ValueError(f"{value} is odd; give an even count")
        return value // 2

    halves = Parsed(even, "an even count")
    assert halves.check("n", 4) == 2
    with pytest.raises(InvalidParameter, match=r"^n: 3 is odd; give an even count$"):
        halves.check("n", 3)


def test_check_values_checks_function_arguments_by_name():
    arguments = {"test_size": Real(0, 1, low_open=True, high_open=True), "chunk_size": Integer(1)}
    assert check_values(arguments, {"test_size": 0.2, "chunk_size": np.int32(10)}) == {"test_size": 0.2, "chunk_size": 10}
    with pytest.raises(InvalidParameter, match=r"^chunk_size must be an integer >= 1; got 0$"):
        check_values(arguments, {"test_size": 0.2, "chunk_size": 0})


def test_the_same_words_in_a_workflow_file(tmp_path):
    from gpal.workflows import WorkflowError, load_workflow

    path = tmp_path / "wf.yaml"
    path.write_text("workflow: toy_1d\ntraining:\n  num_inducing: 0\n")
    with pytest.raises(WorkflowError, match=r"wf\.yaml:3: training\.num_inducing must be one of "
                                            r"\['auto', 'auto_all_rows'\] or an integer >= 1; got 0$"):
        load_workflow(path)


def test_choices_are_the_names_a_command_line_offers():
    assert OneOf(("a", "b")).choices() == ("a", "b") and OneOf((1, 2)).choices() is None
    assert Optional(OneOf(("a",))).choices() == ("a",) and Integer(1).choices() is None
    named = Satisfies(lambda v: isinstance(v, str) or callable(v), "a name or a function", names=("x", "y"))
    assert named.choices() == ("x", "y") and Satisfies(bool, "truthy").choices() is None
