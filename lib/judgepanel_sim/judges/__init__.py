"""The simulated judge server: VLM judges that see only the request (text and pixels).

``judgepanel sim-server`` serves the OpenAI chat-completions protocol on a loopback port.
Five families of simulated judges (see ``families``) answer rubric, holistic and, through
plug-in handlers, other image-judging prompts from generic pixel features (see
``perception``). Faults (429/500, stalls, malformed answers) are injected at seeded rates.
Provider behaviour can be switched on: per-key rate limits (``ratelimit``), prompt caching
(``caching``) and cost in usage (``pricing``), plus a router model that ignores ``n``.
"""

from judgepanel_sim.judges.families import DIMENSIONS as DIMENSIONS
from judgepanel_sim.judges.families import FAMILIES as FAMILIES
from judgepanel_sim.judges.families import Family as Family
from judgepanel_sim.judges.families import ScaleUse as ScaleUse
from judgepanel_sim.judges.families import cues as cues
from judgepanel_sim.judges.families import family_for_model as family_for_model
from judgepanel_sim.judges.handlers import REGISTRY as REGISTRY
from judgepanel_sim.judges.handlers import Handler as Handler
from judgepanel_sim.judges.handlers import SimRequest as SimRequest
from judgepanel_sim.judges.handlers import find_handler as find_handler
from judgepanel_sim.judges.perception import FEATURES as FEATURES
from judgepanel_sim.judges.perception import features as features
from judgepanel_sim.judges.protocol import MODELS as MODELS
from judgepanel_sim.judges.protocol import ApiError as ApiError
from judgepanel_sim.judges.protocol import ImageView as ImageView
from judgepanel_sim.judges.server import SimApp as SimApp
from judgepanel_sim.judges.server import SimConfig as SimConfig
from judgepanel_sim.judges.server import make_app as make_app
from judgepanel_sim.judges.server import serve_command as serve_command
