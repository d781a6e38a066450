"""Class schemes: declared as data, every one usable on the shipped catalogs, and bad ones refused."""

import pytest

from gpal.catalogs.classes import format_class_spec, parse_class_spec
from gpal.catalogs.schemes import CLASS_SCHEMES, DEFAULT_SCHEME, coarse_group, resolve_classes


def test_the_default_scheme_covers_the_open_sky():
    from gpal.catalogs.releases import LAT_CLASS_CODES
    from gpal.catalogs.schemes import AGN_CODES

    classes, merge = resolve_classes(DEFAULT_SCHEME)
    assert classes == ("bll", "fsrq", "pulsar", "other") and merge["pulsar"] == ("psr", "msp")
    # every population but the AGN, the pulsars and "unknown nature" is the other class's
    assert set(merge["other"]) == LAT_CLASS_CODES - set(AGN_CODES) - {"psr", "msp", "unk"}


@pytest.mark.parametrize("name", list(CLASS_SCHEMES))
def test_every_scheme_resolves_and_its_codes_are_known_and_held_once(name):
    from gpal.catalogs.releases import LAT_CLASS_CODES

    scheme = CLASS_SCHEMES[name]
    classes, merge = resolve_classes(name)
    assert classes == scheme.classes and format_class_spec(classes, merge) == scheme.spec
    codes = [c for held in scheme.codes().values() for c in held]
    assert len(codes) == len(set(codes)) and set(codes) <= LAT_CLASS_CODES
    assert "unk" not in codes  # "unknown nature" is never a training label


@pytest.fixture(scope="module")
def shipped():
    from gpal.catalogs import load_catalog

    return {release: load_catalog(release) for release in ("4FGL", "4FGL-DR4")}


@pytest.mark.parametrize("release", ["4FGL", "4FGL-DR4"])
@pytest.mark.parametrize("name", list(CLASS_SCHEMES))
def test_every_scheme_has_sources_of_every_class_in_the_shipped_catalogs(name, release, shipped):
    catalog = shipped[release]
    if release == "4FGL" and name == "blazar_psr_msp":  # millisecond pulsars have their own code from DR3 on
        with pytest.raises(ValueError, match=r"class 'msp' \(codes \['msp'\]\) has no source in 4FGL"):
            catalog._class_groups(*resolve_classes(name))
        return
    groups = catalog._class_groups(*resolve_classes(name))
    counts = catalog.class_counts()
    assert all(sum(counts.get(c, 0) for c in codes) >= 5 for codes in groups.values())


def test_coarse_groups():
    assert [coarse_group(c) for c in ("BLL", "bcu", "rdg", "psr", "MSP", "snr", "glc", "sbg", "unk")] == [
        "agn", "agn", "agn", "pulsar", "pulsar", "other", "other", "other", "other"]


def test_a_scheme_name_with_merges_beside_it_is_refused():
    with pytest.raises(ValueError, match="inside the class spec or scheme"):
        resolve_classes("with_other", {"pulsar": ["psr"]})


def test_a_list_of_classes_takes_the_default_merge_when_none_is_given():
    assert resolve_classes(["bll", "pulsar"]) == (("bll", "pulsar"), {"pulsar": ("psr", "msp")})
    assert resolve_classes(["bll", "psr"], {}) == (("bll", "psr"), {})
    assert parse_class_spec(CLASS_SCHEMES["blazar_psr_msp"].spec) == (("bll", "fsrq", "psr", "msp"), {})
