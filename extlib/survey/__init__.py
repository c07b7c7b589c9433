"""Long survey generation (paper §4.3, §5.2, Table 4): an outline, then each section drafted by ExtAgents (seeking
agents over the section's retrieved sources, knowledge-accumulating writing) or by the AutoSurvey baseline (one call
over the sources its window holds); numbered citations, the paper's citation measures and a pairwise judge."""

from .citations import CitationStats, citation_stats
from .drafting import SurveyConfig
from .judge import judge_pair, summarize
from .outline import Outline, OutlineError, Section
from .run import WRITERS, Survey, SurveyError, judge_surveys, read_judged, read_survey, write_survey
from .sources import Source, SourceCollection, load_sources

__all__ = ["CitationStats", "Outline", "OutlineError", "Section", "Source", "SourceCollection", "Survey",
           "SurveyConfig", "SurveyError", "WRITERS", "citation_stats", "judge_pair", "judge_surveys", "load_sources",
           "read_judged", "read_survey", "summarize", "write_survey"]
