"""Target columns: what an observer needs to point at a source, read from the catalog with a stated fallback."""

import numpy as np
import pytest
from astropy.table import Table

from gpal.catalogs import load_catalog
from gpal.catalogs.releases import FGL3_FLAGS, FGL4_FLAGS
from gpal.catalogs.targets import (
    EXTENDED_FIELD_COLUMNS, FLAGS_NOT_GIVEN, SEXAGESIMAL_COLUMNS, TARGET_COLUMNS, flag_legend, flag_words,
    target_columns,
)
from conftest import write_small_catalog


def _raw(path):
    from gpal.catalogs.catalog import HDU_NAME

    return Table.read(path, hdu=HDU_NAME)


def test_target_columns_are_the_catalogs_values_at_the_digits_it_wrote(small_catalog):
    catalog, raw = load_catalog(small_catalog), _raw(small_catalog)
    ids = [catalog.names[5], catalog.names[0]]  # any order, as asked
    out = target_columns(catalog, ids)
    columns = ["Source_Name", *TARGET_COLUMNS]
    columns[columns.index("DEC") + 1:columns.index("DEC") + 1] = ["RA_hms", "DEC_dms"]
    at = columns.index("DEC_Counterpart") + 1
    columns[at:at] = ["RA_Counterpart_hms", "DEC_Counterpart_dms"]
    assert set(columns) >= set(SEXAGESIMAL_COLUMNS)
    columns[columns.index("Extended_Source_Name") + 1:columns.index("Extended_Source_Name") + 1] = list(
        EXTENDED_FIELD_COLUMNS)
    assert list(out.columns) == columns and out["Source_Name"].tolist() == ids
    for name, (role, _, _) in TARGET_COLUMNS.items():
        if name in ("ASSOC1", "CLASS2", "ASSOC2", "Flags", "Flag_Words", "extended", "Extended_Source_Name",
                    "Inside_Extended"):
            continue
        values = np.asarray(raw[getattr(catalog.columns, role)])[[5, 0]]  # the release record names the column
        assert out[name].dtype == np.float64
        # float32 in the file: the float64 written is the shortest decimal that rounds back to it
        assert [repr(float(v)) for v in out[name]] == [str(v) for v in values], name
        np.testing.assert_array_equal(out[name].to_numpy().astype(np.float32), values)
    assert repr(float(target_columns(catalog, ["4FGL J0000.3-7355"])["RA"][0])) == "0.0983"
    assert out["Flags"].tolist() == np.asarray(raw["Flags"])[[5, 0]].tolist()
    assert out["ASSOC1"].tolist() == [v.decode().strip() for v in np.asarray(raw["ASSOC1"])[[5, 0]]] == ["FBQS J0001-0011", ""]


def test_extended_sources_are_those_the_catalog_names_a_template_for(small_catalog):
    catalog, raw = load_catalog(small_catalog), _raw(small_catalog)
    marker = np.char.strip(np.asarray(raw["Extended_Source_Name"]).astype(str)) != ""
    assert 0 < marker.sum() < len(raw)  # the small catalog's snr rows hold some
    out = target_columns(catalog, catalog.names.tolist())
    assert (out["extended"].to_numpy() == marker).all()
    assert all(name.endswith("e") for name in out["Source_Name"][out["extended"]])


@pytest.mark.parametrize("column, name, expected", [
    ("Conf_95_SemiMajor", "Conf_95_SemiMajor", "nan"),
    ("Flags", "Flags", FLAGS_NOT_GIVEN),
    ("Flags", "Flag_Words", ""),
    ("ASSOC1", "ASSOC1", ""),
    ("RA_Counterpart", "RA_Counterpart", "nan"),
    ("ASSOC_PROB_BAY", "ASSOC_PROB_BAY", "nan"),
    ("Extended_Source_Name", "Extended_Source_Name", ""),
])
def test_a_layout_without_a_column_gets_the_stated_fallback(tmp_path, column, name, expected):
    catalog = load_catalog(write_small_catalog(tmp_path / "older.fits", drop_column=column))
    out = target_columns(catalog, catalog.names[:3].tolist())
    if expected == "nan":
        assert out[name].isna().all()
    else:
        assert (out[name] == expected).all()


def test_without_the_template_column_an_extended_source_is_told_by_its_name(tmp_path):
    catalog = load_catalog(write_small_catalog(tmp_path / "older.fits", drop_column="Extended_Source_Name"))
    out = target_columns(catalog, catalog.names.tolist())
    assert (out["extended"] == np.char.endswith(catalog.names.astype(str), "e")).all() and out["extended"].any()


def test_a_source_the_catalog_lacks_is_named(small_catalog):
    with pytest.raises(KeyError, match=r"4FGL J9999.9\+9999.*not in the catalog small_dr4.fits"):
        target_columns(load_catalog(small_catalog), ["4FGL J9999.9+9999"])


def test_flags_read_in_words_from_the_release_record():
    """Flag n is bit 2**(n-1); the words are the release's (4FGL and 3FGL number some flags differently)."""
    words = flag_words([0, 16 + 8192, -1, 1 << 20], FGL4_FLAGS)
    assert words[0] == "" and words[2] == ""  # no flag; the catalog has no Flags
    assert words[1] == f"5: {FGL4_FLAGS[5]}; 14: {FGL4_FLAGS[14]}"
    assert words[3] == "21: undocumented"
    assert flag_words([1 << 10], FGL3_FLAGS)[0] == f"11: {FGL3_FLAGS[11]}" and 11 not in FGL4_FLAGS
    assert list(flag_legend(FGL4_FLAGS))[:2] == ["FLAG1", "FLAG2"] and flag_legend(FGL4_FLAGS)["FLAG14"] == FGL4_FLAGS[14]


def test_3fgl_has_no_counterpart_position_nor_association_probability():
    """The older layout's stated fallback: NaN where the release record names no column, its own flag words."""
    catalog = load_catalog("3FGL")
    flagged = next(name for name, flags in zip(catalog.names, np.asarray(catalog.table["Flags"])) if flags & 64)
    out = target_columns(catalog, [flagged])
    assert out[["RA_Counterpart", "DEC_Counterpart", "ASSOC_PROB_BAY", "ASSOC_PROB_LR"]].isna().all(axis=None)
    assert f"7: {FGL3_FLAGS[7]}" in out["Flag_Words"][0]  # flag 7 is 3FGL's alone


def test_the_sexagesimal_position_is_astropys_reading_of_the_degrees():
    from astropy import units as u
    from astropy.coordinates import SkyCoord

    catalog = load_catalog("FL16Y")
    ids = list(catalog.names[::700])
    out = target_columns(catalog, ids)
    # read back by astropy's parser: the degrees within the digits written (0.01 s, 0.1 arcsec)
    sky = SkyCoord(out["RA"].to_numpy() * u.deg, out["DEC"].to_numpy() * u.deg)
    back = SkyCoord(out["RA_hms"].tolist(), out["DEC_dms"].tolist(), unit=(u.hourangle, u.deg))
    assert np.all(back.separation(sky).arcsec < 0.1)
    assert all(len(r.split(":")) == 3 and d[0] in "+-" for r, d in zip(out["RA_hms"], out["DEC_dms"]))
    # the counterpart's, where the catalog gives one; empty where not
    has = out["RA_Counterpart"].notna().to_numpy()
    assert has.any() and (~has).any()
    sky = SkyCoord(out.loc[has, "RA_Counterpart"].to_numpy() * u.deg, out.loc[has, "DEC_Counterpart"].to_numpy() * u.deg)
    back = SkyCoord(out.loc[has, "RA_Counterpart_hms"].tolist(), out.loc[has, "DEC_Counterpart_dms"].tolist(),
                    unit=(u.hourangle, u.deg))
    assert np.all(back.separation(sky).arcsec < 0.1)
    assert (out.loc[~has, ["RA_Counterpart_hms", "DEC_Counterpart_dms"]] == "").all(axis=None)


def test_a_point_source_inside_an_extended_sources_model_is_named():
    from astropy import units as u
    from astropy.coordinates import SkyCoord

    catalog = load_catalog("FL16Y")
    out = target_columns(catalog, list(catalog.names))
    models = Table.read(catalog.path, hdu="ExtendedSources")
    centre = {str(n).strip(): SkyCoord(r * u.deg, d * u.deg) for n, r, d in
              zip(models["Source_Name"], models["RAJ2000"], models["DEJ2000"])}
    major = dict(zip((str(n).strip() for n in models["Source_Name"]), models["Model_SemiMajor"]))
    inside = out[out["Inside_Extended"] != ""]
    assert 0 < len(inside) < 200 and not inside["extended"].any()
    for _, row in inside.iterrows():  # independently: within the model's semi-major axis of its centre
        here = SkyCoord(row["RA"] * u.deg, row["DEC"] * u.deg)
        for name in row["Inside_Extended"].split("; "):
            assert here.separation(centre[name]).deg <= major[name] + 1e-9, (row["Source_Name"], name)
    assert "G150.3+4.5" in out.set_index("Source_Name").at["FL16Y J0426.5+5435", "Inside_Extended"]
