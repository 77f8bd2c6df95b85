"""The synthetic world: a procedural renderer and aesthetic datasets in the real formats.

The renderer lives in `judgepanel.synth.render` (``from judgepanel.synth.render import
Scene, Execution, render, to_jpeg``); the package does not re-export ``render`` so that the
name keeps meaning the module.
"""

from judgepanel.synth.render import CONTENTS as CONTENTS
from judgepanel.synth.render import Execution as Execution
from judgepanel.synth.render import Scene as Scene
from judgepanel.synth.render import to_jpeg as to_jpeg
from judgepanel.synth.world import EVA_WORLD as EVA_WORLD
from judgepanel.synth.world import PARA_WORLD as PARA_WORLD
from judgepanel.synth.world import WorldSpec as WorldSpec
from judgepanel.synth.world import simulate as simulate
from judgepanel.synth.world import synth_command as synth_command
from judgepanel.synth.world import write_world as write_world
from judgepanel.synth.world import write_worlds as write_worlds
