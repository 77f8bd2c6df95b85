"""Stand-in comparator scores for the demo: three simple image statistics, labelled as such.

The real comparators are supervised image-aesthetics models run elsewhere (data/README.md
shows how to produce their CSV). A build machine has none of them, so the demo imports a
CSV made here from three pixel statistics of each image, named ``imagestat-sharpness``,
``imagestat-colourfulness`` and ``imagestat-exposure``. They are image statistics, not
aesthetics models, and every page that shows them says so.

    python -m judgepanel_sim.world.comparators --dataset eva:data/synth/synth-eva \\
        --out data/synth/comparators/eva.raw.csv --imported data/synth/comparators/eva.csv

``--imported`` runs the check of ``judgepanel import scores`` (``load_scores``) in the same
process, which the demo's `make data` uses to save an interpreter start per dataset.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from judgepanel.datasets import DatasetError, load_dataset
from judgepanel.datasets.comparators import load_scores
from judgepanel.studies.fusion.imagestats import image_stats_table
from judgepanel_sim.world.memory import keep_freed_memory

MODELS = ("imagestat-sharpness", "imagestat-colourfulness", "imagestat-exposure")
PARALLEL_FROM = 200
"""Images above which the statistics are computed in worker processes."""


def comparator_scores(stats: pd.DataFrame) -> pd.DataFrame:
    """The long ``image_id, model, score`` table of the three statistics.

    Exposure is higher when mean luma is near mid-grey and few pixels are clipped.
    """
    exposure = (
        -(stats["mean_luminance"] - 0.5).abs()
        - stats["clipped_highlights"]
        - stats["clipped_shadows"]
    )
    wide = pd.DataFrame(
        {
            "imagestat-sharpness": stats["laplacian_sharpness"],
            "imagestat-colourfulness": stats["colourfulness"],
            "imagestat-exposure": exposure,
        },
        index=stats.index,
    )
    long = (
        wide.rename_axis("image_id")
        .reset_index()
        .melt(id_vars="image_id", var_name="model", value_name="score")
    )
    return long.sort_values(["model", "image_id"], kind="stable").reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgepanel_sim.world.comparators")
    parser.add_argument("--dataset", required=True, help="KIND:PATH of an EVA or PARA folder")
    parser.add_argument("--out", type=Path, required=True, help="the CSV to write")
    parser.add_argument("--cache", type=Path, default=Path("data/cache/imagestats"))
    parser.add_argument(
        "--imported",
        type=Path,
        help="also check the CSV as `judgepanel import scores` does and write the result here",
    )
    args = parser.parse_args(argv)
    kind, _, root = args.dataset.partition(":")
    try:
        images = load_dataset(kind, root).images
        # Worker processes pay off only on many images: each one starts an interpreter.
        n_jobs = -1 if len(images) > PARALLEL_FROM else 1
        stats = image_stats_table(
            images[["image_id", "path"]],
            cache_dir=args.cache,
            n_jobs=n_jobs,
            worker_setup=keep_freed_memory,
        )
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    comparator_scores(stats).to_csv(args.out, index=False)
    print(f"wrote {len(stats)} images x {len(MODELS)} image statistics to {args.out}")
    if args.imported is not None:
        try:
            table = load_scores(args.out, known_images=images["image_id"].astype(str))
        except DatasetError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        args.imported.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.imported, index=False)
        print(f"wrote {len(table)} checked scores to {args.imported}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
