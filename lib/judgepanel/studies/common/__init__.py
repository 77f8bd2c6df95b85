"""What more than one study uses; a study may import this package, never another study.

- ``rubric_plan``: the rubric calls for a table of images (:func:`plan_images`), planned by
  the fusion study for rated images and by VAB's score-then-rank for set images.
- ``features``: per-image holistic and dimension means read from a score table.
- ``combiners``: the gradient-boosting combiner, its fixed folds and out-of-fold fits;
  ``fitcache``: those fits made once per process.
- ``run_dataset``: the dataset a run gives a study, refused when of another kind.
"""
