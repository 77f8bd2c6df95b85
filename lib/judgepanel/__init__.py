"""judgepanel: vision-language models as judges of images, studied reproducibly."""

__version__ = "0.1.0"
