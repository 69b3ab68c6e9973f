"""Each lesson's summary in Yorùbá: the markdown cell that follows the English summary.

tests/test_yoruba.py checks that the notebooks hold exactly these texts. They follow the
convention of docs/yoruba.md: full tone marks, one word per idea (tools/glossary.py's `TERMS`),
English technical terms kept as they are. The lessons' questions in Yorùbá sit beside their English,
in questions/lesson1.py ... lesson9.py.
"""

from __future__ import annotations

_OPEN, _CLOSE = '<div lang="yo">\n\n### Àkótán ní Yorùbá\n\n', "\n\n</div>"

# Each lesson's summary (lessons 4 and 5 have none in English: theirs sums up their sections).
SUMMARIES: dict[int, str] = {
    1: _OPEN
    + """\
- `backward()` ń fi kún `.grad`; ìkójọpọ̀ gradient ni àpapọ̀ yẹn, tí a pín kí ó lè di àròpín.
- Fún àròpín loss micro-batch kọ̀ọ̀kan ní ipa ìpín àpẹẹrẹ rẹ̀ (`1/N` tí ìwọ̀n wọn bá dọ́gba).
- Sọ gradient di òdo ṣáájú micro-batch àkọ́kọ́, ṣe ìmúdójúìwọ̀n lẹ́ẹ̀kan lẹ́yìn micro-batch
  N, kí o sì sọ ọ́ di òdo lẹ́sẹ̀kẹsẹ̀ lẹ́yìn náà.
- Èsì float32 yàtọ̀ díẹ̀ ní àwọn díjíìtì tó kẹ́yìn nítorí ètò àròpọ̀, kì í ṣe nítorí pé ìkójọpọ̀
  kò tọ̀nà; float64 fi hàn pé wọ́n dọ́gba títí dé rounding tirẹ̀, nǹkan bí $10^{-16}$.

Ẹ̀kọ́ tó kàn: ẹ̀kọ́ 2, níbi tí pípín loss ti ń ṣàṣìṣe nínú kóòdù gidi."""
    + _CLOSE,
    2: _OPEN
    + """\
Gbogbo àṣìṣe tí ẹ̀kọ́ yìí wọ̀n jẹ́ ipa tí a fi sí ibi tí kò yẹ:

- Fún micro-batch kọ̀ọ̀kan ní ipa ìpín rẹ̀ nínú ohun tí loss ń ṣe àròpín lé lórí: àpẹẹrẹ, tàbí
  token gidi (fún causal language model, àwọn label tí a ti sún). Àṣìṣe token ń kọ́ model fún
  ipa tí kò tọ̀nà: kò ṣe ìpalára lórí micro-batch tí a dà pọ̀ dáadáa, ṣùgbọ́n model mìíràn ló
  ń jáde lórí àwọn tí a kó jọ gẹ́gẹ́ bí gígùn wọn.
- Loss tí ó tóbi ní ìlọ́po N jẹ́ ìlọ́po N ìmúdójúìwọ̀n fún SGD, kò sì fẹ́rẹ̀ yí nǹkan padà fún
  Adam — títí clipping, L2 penalty nínú loss (tàbí `weight_decay` Adam tí ó so mọ́ gradient)
  tàbí loss kejì yóò fi mú kí ìwọ̀n gradient ṣe pàtàkì. Weight decay AdamW tí a yà sọ́tọ̀ kò
  ka gradient rárá.
- Pín fèrèsé tó kẹ́yìn sí ohun tí ó ní, kì í ṣe sí N tí a ṣètò.
- Pe scheduler, clipping àti logging lẹ́ẹ̀kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan.

Ẹ̀kọ́ tó kàn: ibi kan ṣoṣo tí ipa kankan kò ti lè ṣèrànwọ́ — BatchNorm."""
    + _CLOSE,
    3: _OPEN
    + """\
- Ìkójọpọ̀ pé gẹ́lẹ́ nígbà tí loss àpẹẹrẹ kọ̀ọ̀kan bá gbára lé àpẹẹrẹ náà nìkan. BatchNorm ní
  ipò training ń ba èyí jẹ́: forward pass rẹ̀ gbára lé micro-batch.
- Ìyàtọ̀ gradient ń pọ̀ sí i bí micro-batch ṣe ń kéré sí i; BatchNorm1d ń jìyà ju
  BatchNorm2d lọ.
- Tí a bá kọ́ model dé òpin, micro-batch 16 sí 32 fún BatchNorm kọ̀ọ̀kan ń ṣe dáadáa bíi
  gbogbo batch; àpẹẹrẹ díẹ̀ kò ṣe bẹ́ẹ̀. Kíkó micro-batch N jọ ń ṣe gradient tí GPU N ń ṣe pẹ̀lú
  BatchNorm lásán gẹ́lẹ́ (kì í ṣe running statistics wọn: DDP ń lo ti rank 0); àwọn ètò
  SyncBatchNorm nìkan ni kò ṣeé ṣe.
- Running statistics ń yí padà ní ìgbà N fún fèrèsé kọ̀ọ̀kan; momentum $1-(1-m)^{1/N}$ fẹ́rẹ̀
  tún un ṣe.
- LayerNorm, GroupNorm àti BatchNorm ní ipò eval pé gẹ́lẹ́; pẹ̀lú iye kan ṣoṣo fún channel
  kọ̀ọ̀kan, èsì BatchNorm jẹ́ bias rẹ̀ nìkan, PyTorch sì kọ̀ ọ́.
- Dropout dọ́gba ní àròpín nìkan; dá àwọn mask dúró (tàbí lo ipò eval) láti fi wọ́n wéra
  gẹ́lẹ́."""
    + _CLOSE,
    4: _OPEN
    + """\
- Activations nìkan ló ń tẹ̀lé ìwọ̀n micro-batch: bí N ṣe ń pọ̀ sí i, peak memory ń dínkù, ó
  sì dúró díẹ̀ lókè ìpìlẹ̀ — weights, gradient wọn àti ipò optimizer, pẹ̀lú àwọn tensor ìgbà
  díẹ̀ ti ìgbésẹ̀ optimizer.
- Ìkójọpọ̀ ń dín memory kù, kì í ṣe àkókò: micro-batch kékeré ń ṣe iṣẹ́ díẹ̀ ní ìpè kọ̀ọ̀kan,
  nítorí náà ìmúdójúìwọ̀n kọ̀ọ̀kan ń pẹ́ sí i.
- Láti ṣètò: yan N tí ó kéré jù tí peak rẹ̀ (ìpìlẹ̀ + micro-batch × activations fún àpẹẹrẹ
  kọ̀ọ̀kan) wọ inú memory tí ó wà.
- Lórí GPU, `torch.cuda.max_memory_allocated` ń wọ̀n peak àwọn tensor; láti mọ̀ bóyá ètò kan wọ
  inú káàdì, fi `torch.cuda.max_memory_reserved` wé `torch.cuda.mem_get_info()`."""
    + _CLOSE,
    5: _OPEN
    + """\
- Training tí a kó jọ (micro-batch 32, mẹ́rin-mẹ́rin) wà lórí ìlà training batch 128, títí
  dé rounding; batch 32 láìsí ìkójọpọ̀ jẹ́ training mìíràn.
- Scheduler àti clipping ń ṣiṣẹ́ lẹ́ẹ̀kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan; ṣírò gígùn
  schedule ní ìmúdójúìwọ̀n optimizer: `math.ceil(len(dataloader) / N) * epochs`.
- `torch.compile` ń ṣiṣẹ́ lẹ́ẹ̀kan sí i fún micro-batch tó kẹ́yìn tí ó kúrú: mú ìrísí dúró
  (`drop_last=True`), tàbí sọ pé ìwọ̀n batch lè yí padà (`torch.compile(model, dynamic=True)`)."""
    + _CLOSE,
    6: _OPEN
    + """\
- Batch àpapọ̀ = world size × micro-batch × iye ìkójọpọ̀: ṣírò N lẹ́ẹ̀kan sí i tí iye GPU
  bá yí padà.
- `no_sync()` gbọ́dọ̀ bo forward àti backward gbogbo micro-batch àfi èyí tó kẹ́yìn nínú
  fèrèsé; àṣìṣe náà (backward nìkan) ṣì ń kọ́ model dáadáa, ṣùgbọ́n ó ń ṣe all-reduce ní ìgbà N
  fún ìmúdójúìwọ̀n kọ̀ọ̀kan, èyí tí ó ń gba àkókò. Gbogbo process gbọ́dọ̀ ṣe iye micro-batch
  kan náà: ọ̀kan tí ó lé ń dá iṣẹ́ náà dúró, tàbí kí ó bá all-reduce mìíràn pàdé kí ó sì da
  fèrèsé pọ̀ láìsí ẹni tí yóò mọ̀ (`Join` àti `TORCH_DISTRIBUTED_DEBUG=DETAIL` ń ṣèrànwọ́).
- Loss lórí token: ṣe all-reduce iye token G fèrèsé, kí o sì fi W / G sọ àpapọ̀ loss process
  kọ̀ọ̀kan di púpọ̀ (W: world size, nítorí DDP ń ṣe àròpín lórí àwọn process).
- Mixed precision: ìkójọpọ̀ kò fi àṣìṣe kún un nígbà tí fèrèsé bá ń kó jọ ní float32; `.grad`
  bfloat16 ń fi àṣìṣe tí ó tó ìdá díẹ̀ nínú ọgọ́rùn-ún kún un lórí fèrèsé gígùn, nítorí náà
  kó jọ sínú buffers float32. Pẹ̀lú GradScaler, pe `scaler.unscale_()` lẹ́ẹ̀kan ní fèrèsé
  kọ̀ọ̀kan ṣáájú clipping, `scaler.step()` àti `scaler.update()` lẹ́ẹ̀kan, kí o sì pe scheduler
  lẹ́yìn ìmúdójúìwọ̀n gidi nìkan.
- Checkpointing àti ìkójọpọ̀ jẹ́ ọ̀nà méjì tí ó ń ran ara wọn lọ́wọ́ láti dín memory kù;
  sharding (FSDP/ZeRO) ń dín ìpìlẹ̀ kù. Nínú FSDP, fífo sync sílẹ̀ ń pa gradient tí a kò pín
  mọ́, àti pẹ̀lú resharding àtilẹ̀wá ó ń dín ìbánisọ̀rọ̀ kù títí dé ìdá mẹ́ta (`FULL_SHARD`) tàbí
  ìdajì (`SHARD_GRAD_OP`), bí fèrèsé ṣe ń gùn sí i (ní N = 4: ìdá kan nínú mẹ́rin, ìdá mẹ́ta
  nínú mẹ́jọ); pípa àwọn parameter mọ́ láìpín jákèjádò fèrèsé ń dín
  in kù ní nǹkan bí ìlọ́po N pẹ̀lú `SHARD_GRAD_OP`, ṣùgbọ́n ẹ̀dà wọn kíkún yóò wà nínú memory.
  Ṣe clipping lórí norm gbogbo gradient (DTensor FSDP2, `model.clip_grad_norm_` nínú FSDP1),
  lẹ́ẹ̀kan, lẹ́yìn sync fèrèsé. Nínú DeepSpeed, stage ló ń pinnu: ZeRO-0/1 ń ṣe
  reduce lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan, ZeRO-2/3 lẹ́yìn micro-batch kọ̀ọ̀kan
  ([orísun](../docs/sources.md#lesson-6)).
- FSDP pẹ̀lú `param_dtype=torch.bfloat16`: FSDP1 lábẹ́ `no_sync()` ń kó fèrèsé jọ ní
  bfloat16, `reduce_dtype` yòówù tí o yàn (lò ó fún fèrèsé kúkúrú nìkan, tàbí ṣe sync lẹ́yìn
  micro-batch kọ̀ọ̀kan); FSDP2 ń kó o jọ ní `reduce_dtype`: fi `reduce_dtype=torch.float32`
  sí i.
- Pipeline parallelism náà ń pín batch sí micro-batch: bí wọ́n bá ṣe pọ̀ tó, bẹ́ẹ̀ ni bubble
  ṣe ń kéré tó."""
    + _CLOSE,
    7: _OPEN
    + """\
- Lórí fèrèsé tí ó kún, gbogbo framework ń ṣe ohun tí gbogbo batch ń ṣe, títí dé rounding
  float32.
- Fèrèsé tó kẹ́yìn tí ó kúrú: Trainer tọ̀nà; Accelerate àti Lightning ń pín in sí N; loop
  ìwé-ẹ̀kọ́ ń fò ó. Fún micro-batch kọ̀ọ̀kan ní ipa ohun tí fèrèsé ní, lọ́nà N, láti tún un ṣe.
- Token: Trainer nìkan ló ń kà wọ́n, ó sì tọ̀nà nìkan tí ó bá mọ̀ pé loss ń sún label rẹ̀.
- Trainer ń kọ loss fèrèsé sílẹ̀; `self.log` ti Lightning àti loop Accelerate ń fi ti
  micro-batch tó kẹ́yìn hàn.
- Scheduler ń lọ síwájú lẹ́ẹ̀kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan: ṣírò gígùn rẹ̀ ní
  ìmúdójúìwọ̀n optimizer. Àyàfi ti Accelerate lórí process W, tí ó ń lọ síwájú ní ìgbà W (àfi
  tí `DataLoaderConfiguration(split_batches=True)` bá wà): ṣírò gígùn rẹ̀ fún gbogbo DataLoader,
  kí o tó pe `prepare`.
- Gbogbo wọn ń ṣe clipping lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan; Trainer ń ṣe é láìjẹ́ pé a sọ fún un."""
    + _CLOSE,
    8: _OPEN
    + """\
Gbogbo rẹ̀ tọ̀nà ní ìgbìyànjú àkọ́kọ́? O lè ṣàlàyé ìkójọpọ̀ gradient fún ẹlẹgbẹ́ rẹ: ohun tí ó
ń kó jọ, ìgbà tí a ó ṣe ìmúdójúìwọ̀n àti tí a ó sọ gradient di òdo, bí a ṣe ń pín loss, ìdí
tí BatchNorm kò fi bá a mu, ohun tí ó ń ná ní memory àti àkókò, àti bí ó ṣe ń bá GPU púpọ̀ àti
àwọn framework pàdé. Ṣé o ṣàṣìṣe ọ̀kan? Ìtọ́ka rẹ̀ ń dárúkọ èrò náà, ẹ̀kọ́ tí a tò lókè sì ń
wọ̀n ọ́."""
    + _CLOSE,
}
