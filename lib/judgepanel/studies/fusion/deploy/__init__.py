"""Deploy a fitted arm: fit it for keeps on a finished run, then score unlabelled images.

- ``arms``: what each arm reads (features, calls); ``fit``: the fit, its out-of-fold
  accuracy, prediction; ``trees``: gradient boosting as arrays; ``model``: the model file
  (arrays and JSON, never a pickle); ``shift``: new images against the training images;
  ``holdout``: the rehearsal of notebook 04;
  ``training``: ``judgepanel fit``; ``plan``: ``judgepanel predict``'s calls and scores.
"""

from judgepanel.studies.fusion.deploy.arms import ARMS as ARMS
from judgepanel.studies.fusion.deploy.arms import arm_features as arm_features
from judgepanel.studies.fusion.deploy.arms import arm_spec as arm_spec
from judgepanel.studies.fusion.deploy.fit import accuracy as accuracy
from judgepanel.studies.fusion.deploy.fit import fit_arm as fit_arm
from judgepanel.studies.fusion.deploy.fit import predict_model as predict_model
from judgepanel.studies.fusion.deploy.holdout import Holdout as Holdout
from judgepanel.studies.fusion.deploy.holdout import describe_holdout as describe_holdout
from judgepanel.studies.fusion.deploy.holdout import (
    describe_rehearsal_choice as describe_rehearsal_choice,
)
from judgepanel.studies.fusion.deploy.holdout import holdout_claims as holdout_claims
from judgepanel.studies.fusion.deploy.holdout import holdout_family as holdout_family
from judgepanel.studies.fusion.deploy.holdout import oof_words as oof_words
from judgepanel.studies.fusion.deploy.holdout import rehearsal_dataset as rehearsal_dataset
from judgepanel.studies.fusion.deploy.holdout import rehearse as rehearse
from judgepanel.studies.fusion.deploy.model import DeployedModel as DeployedModel
from judgepanel.studies.fusion.deploy.model import ModelFileError as ModelFileError
from judgepanel.studies.fusion.deploy.model import load_model as load_model
from judgepanel.studies.fusion.deploy.model import save_model as save_model
from judgepanel.studies.fusion.deploy.shift import describe_shift as describe_shift
from judgepanel.studies.fusion.deploy.shift import shift_table as shift_table
from judgepanel.studies.fusion.deploy.training import fit_run as fit_run
