"""verl's own loader (``verl.trainer.ppo.reward.get_custom_reward_fn``, the
real package) loads the reward both ways the docs give: ``pkg://`` and the
file path of :mod:`mmverify.integrations.rl`."""
import json

import pytest
from tests.helpers.integrations_util import oracle_text, require

import mmverify.integrations.rl as rl

LAMPREY, DRAGON = "mcm-2024-a-lamprey", "cumcm-2024-a-dragon-dance"


def verl_loader():
    require("omegaconf")
    return require("verl.trainer.ppo.reward").get_custom_reward_fn


def load(path: str, name: str):
    loader = verl_loader()          # skips (or fails under MMVERIFY_REQUIRE_EXTRAS) without verl
    from omegaconf import OmegaConf

    config = OmegaConf.create({"reward": {"custom_reward_function": {"path": path, "name": name,
                                                                     "reward_kwargs": {}}}})
    return loader(config)


def infeasible_dragon() -> str:
    data = json.loads(oracle_text(DRAGON))
    data["experiment_result"]["q5"]["max_head_speed_mps"] = 1.5     # over the 2 m/s handle limit
    return json.dumps(data)


@pytest.mark.parametrize("path", ["pkg://mmverify.integrations.rl", rl.__file__],
                         ids=["pkg", "file-path"])
def test_verl_loads_and_calls_the_reward(path):
    fn = load(path, "compute_score")
    oracle = "```json\n" + oracle_text(LAMPREY) + "\n```"
    # the call verl's reward manager makes: keywords, one response at a time
    assert fn(data_source="mmverify", solution_str=oracle, ground_truth=LAMPREY,
              extra_info={"split": "train", "index": 0}) == 1.0
    assert fn(data_source="mmverify", solution_str=infeasible_dragon(), ground_truth=DRAGON,
              extra_info=None) == 0.0
    shaped = load(path, "compute_score_shaped")
    got = shaped(data_source="mmverify", solution_str=infeasible_dragon(), ground_truth=DRAGON,
                 extra_info={"shaped_weight": 0.5})
    assert 0.0 < got <= 0.5
