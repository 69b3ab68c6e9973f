"""The course's lessons, declared once: every list of lessons in the repository comes from here.

The README's course table and launch links (`python -m tools.repository`), the site's pages
and the Yorùbá catalogues (`tools/site.py`, `tools/catalogues.py`), the setup cells' extras
(`tools/setup_cell.py`), the self-check's questions (`quiz/questions`), the instructor's graded
assignments (`gradacc_grader.bank`) and the tests all read `LESSONS`. Adding a lesson is: write
its notebook in notebooks/, add one `Lesson(...)` below, translate it (CONTRIBUTING.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    """One lesson: its number, its notebook, its titles and what it needs.

    - `extra`, `extra_modules`: the optional extra of pyproject.toml the lesson needs, and
      the modules it brings (its setup cell installs the extra where one is missing);
    - `questions`: its self-check questions live in `gradacc_lessons.quiz.questions.lessonN`
      (as `LESSONN` and `LESSONN_YORUBA`); `predicts`: one of them asks to predict a number;
    - `graded`: the instructor's bank has its assignment, `gradacc_grader.bank.lessonN`;
    - `catalogue`: the Yorùbá edition translates it (locales/yo/LC_MESSAGES/notebooks/).
    """

    number: int
    notebook: str
    title: str
    title_yo: str  # as the lesson's catalogue (locales/yo) translates its heading
    shows: str
    extra: str | None = None
    extra_modules: tuple[str, ...] = ()
    questions: bool = True
    predicts: bool = True
    graded: bool = False
    catalogue: bool = True

    @property
    def stem(self) -> str:
        """The notebook's name without `.ipynb`: the site's page name."""
        return self.notebook.removesuffix(".ipynb")


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        1,
        "01_accumulation_is_a_full_batch.ipynb",
        "Accumulation is a full batch in disguise",
        "Ìkójọpọ̀ gradient jẹ́ batch kíkún ní àwọ̀ mìíràn",
        "gradients add up in `.grad`; N micro-batches = one batch, in float32 and float64; when "
        "to step and clear (a timeline); the off-by-one bug; the same training with SGD and AdamW",
        graded=True,
    ),
    Lesson(
        2,
        "02_scaling_the_loss.ipynb",
        "Scaling the loss right",
        "Pínpín loss bí ó ti yẹ",
        "mean vs sum, and what a loss N times too large does to SGD and Adam; uneven "
        "micro-batches; token-level losses, the Transformers bug (2023-2024) and a model trained "
        "to the end with it; the last window, schedulers, clipping, logging",
        graded=True,
    ),
    Lesson(
        3,
        "03_batchnorm.ipynb",
        "Where the equivalence breaks: BatchNorm",
        "Ibi tí ìdọ́gba ti já: BatchNorm",
        "where the equivalence breaks: BatchNorm's per-micro-batch statistics; LayerNorm and "
        "GroupNorm; running statistics; whole trainings with per-micro-batch BatchNorm, and N "
        "micro-batches = N GPUs with plain BatchNorm; one sample; dropout",
        graded=True,
    ),
    Lesson(
        4,
        "04_peak_memory.ipynb",
        "Peak memory: measure it, plot it, plan with it",
        "Peak memory: wọ̀n ọ́n, yà á, kí o sì fi ṣètò",
        "peak memory against micro-batch size and N, measured and modelled; where in a window "
        "the peak happens, and a 7B model traced by the planner (lesson 9); the time it costs; "
        "a planner for a memory budget",
        extra="frameworks",
        extra_modules=("transformers",),  # the 7B model's config
        graded=True,
    ),
    Lesson(
        5,
        "05_training_curves.ipynb",
        "Training curves on real data",
        "Ìlà training lórí data gidi",
        "a whole training run on real data: large batch, accumulation, small batch; a schedule "
        "sized by `len(dataloader)`, `torch.compile` and a short last micro-batch",
        graded=True,
    ),
    Lesson(
        6,
        "06_beyond_one_device.ipynb",
        "Beyond one device",
        "Ré kọjá ẹ̀rọ kan",
        "DistributedDataParallel with `no_sync()` on real processes (timed, nanoGPT's flag, "
        "unequal micro-batch counts), mixed precision (bfloat16 `.grad`, skipped steps), "
        "activation checkpointing, FSDP/ZeRO's memory and communication, pipeline parallelism",
        graded=True,
    ),
    Lesson(
        7,
        "07_frameworks.ipynb",
        "Accumulation in the frameworks you will use",
        "Ìkójọpọ̀ gradient nínú àwọn framework tí o ó lò",
        "one tiny language model trained by the course's loop, Transformers' Trainer, Accelerate "
        "and Lightning against a float64 full batch: even windows, the short last window, token "
        "counts, logged loss, scheduler, clipping; DeepSpeed in words; a translation table "
        "(needs the `frameworks` extra, which `make lab` installs)",
        extra="frameworks",
        extra_modules=("transformers", "accelerate", "lightning"),
    ),
    Lesson(
        8,
        "08_self_study_quiz.ipynb",
        "Self-study quiz: gradient accumulation",
        "Ìdánwò fún ara rẹ: ìkójọpọ̀ gradient",
        "the FAQ (in English or in Yorùbá, the language of the guide the course is built from) "
        "and every lesson's questions, with a score that counts first tries",
        questions=False,
        predicts=False,
    ),
    Lesson(
        9,
        "09_plan_a_real_fine_tune.ipynb",
        "Plan a real fine-tune: will it fit, and with which N?",
        "Ṣètò fine-tune gidi: ṣé yóò wọ inú memory, N wo ni?",
        "the capstone: plan an 8B model's fine-tune on a 24 GB GPU (full fine-tuning does not "
        "fit; LoRA + checkpointing at which micro-batch and N) and a 1,024 × 1,024 segmentation "
        "model, from one training step traced on fake tensors (`gradacc-plan`); small versions "
        "trained here, predicted against measured; the planner beside Accelerate's rule and the "
        "transformer-math formula (needs the `frameworks` extra)",
        extra="frameworks",
        extra_modules=("transformers", "peft"),
        predicts=False,
        catalogue=False,
    ),
)


def lesson(number: int) -> Lesson:
    """The lesson numbered `number`.

    >>> lesson(3).notebook
    '03_batchnorm.ipynb'
    """
    for each in LESSONS:
        if each.number == number:
            return each
    numbers = ", ".join(str(each.number) for each in LESSONS)
    raise ValueError(f"there is no lesson {number!r}: the lessons are {numbers}")
