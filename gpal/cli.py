"""The ``gpal`` command: each verb is a thin layer over the library."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from gpal.catalogs.catalog import DEFAULT_RELEASE, RELEASES


def _catalog_summary(args: argparse.Namespace) -> int:
    from gpal.catalogs import load_catalog

    catalog = load_catalog(args.catalog)
    print(catalog.summary(args.features))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpal",
        description="Gaussian-process classification of Fermi-LAT catalog sources with noisy inputs.",
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    catalog = verbs.add_parser("catalog", help="inspect a 4FGL-family catalog")
    catalog_verbs = catalog.add_subparsers(dest="catalog_verb", required=True, metavar="ACTION")
    summary = catalog_verbs.add_parser(
        "summary", help="print the release, its class counts and the feature preset"
    )
    summary.add_argument(
        "--catalog",
        default=DEFAULT_RELEASE,
        help=f"a shipped release ({', '.join(RELEASES)}; default {DEFAULT_RELEASE}) "
        "or the path of a gll_psc_v*.fit[.gz] file",
    )
    summary.add_argument(
        "--features",
        default=None,
        help="feature preset to describe (default: the preset of Villacampa-Calvo et al. 2021)",
    )
    summary.set_defaults(run=_catalog_summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"gpal: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
