"""The simulated judge server: VLM judges that see only the request (text and pixels).

``judgepanel sim-server`` serves the OpenAI chat-completions protocol on a loopback port.
Five families of simulated judges (see ``families``) answer rubric, holistic and, through
plug-in handlers, other image-judging prompts from generic pixel features (see
``perception``). Faults (429/500, stalls, malformed answers) are injected at seeded rates.
"""

from judgepanel.sim.families import DIMENSIONS as DIMENSIONS
from judgepanel.sim.families import FAMILIES as FAMILIES
from judgepanel.sim.families import Family as Family
from judgepanel.sim.families import ScaleUse as ScaleUse
from judgepanel.sim.families import cues as cues
from judgepanel.sim.families import family_for_model as family_for_model
from judgepanel.sim.handlers import REGISTRY as REGISTRY
from judgepanel.sim.handlers import Handler as Handler
from judgepanel.sim.handlers import SimRequest as SimRequest
from judgepanel.sim.handlers import find_handler as find_handler
from judgepanel.sim.perception import FEATURES as FEATURES
from judgepanel.sim.perception import features as features
from judgepanel.sim.protocol import MODELS as MODELS
from judgepanel.sim.protocol import ApiError as ApiError
from judgepanel.sim.protocol import ImageView as ImageView
from judgepanel.sim.server import SimApp as SimApp
from judgepanel.sim.server import SimConfig as SimConfig
from judgepanel.sim.server import make_app as make_app
from judgepanel.sim.server import serve_command as serve_command
