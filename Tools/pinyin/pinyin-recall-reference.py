#!/usr/bin/env python3
"""Random Chinese names and the queries a user types for them, computed with pypinyin (an independent
pinyin source: its own dictionaries, not Unihan through Coffer's generator), for PinyinRecallTests.

Usage: pinyin-recall-reference.py COUNT SEED  → one JSON object per line:
  {"name": "张三丰", "full": "zhangsanfeng", "spaced": "zhang san feng", "initials": "zsf",
   "mixed": "张sanf", "prefix": "zhangsanfe", "retroflex": "zhsf"}

"retroflex" is the initials as a user types them when zh, ch and sh count as initials: pypinyin's own
initial (Style.INITIALS) where it is zh, ch or sh, the first letter elsewhere (陈思 → chs, 张三 → zhs).

Surnames are drawn by frequency. The order and the shares of the first 20 are from the Chinese Academy of
Sciences' 2006 surname survey (袁义达, Institute of Genetics and Developmental Biology, 296 million
people: 李 7.94%, 王 7.41%, 张 7.07% …); the next 80 follow the Ministry of Public Security's 2019
ranking (《二〇一九年全国姓名报告》) with shares decaying from 0.85% to 0.1% (approximate: the report
does not publish them). Given names are one or two characters from the 2019 report's most used
given-name characters. pypinyin's own reading of the whole name (lazy_pinyin, its phrase dictionary and
surname-free default) is the reference: Coffer must find the row by it.
"""
import json
import random
import sys

from pypinyin import Style, lazy_pinyin

TOP_20 = [("李", 7.94), ("王", 7.41), ("张", 7.07), ("刘", 5.38), ("陈", 4.53), ("杨", 3.08), ("赵", 2.29),
          ("黄", 2.23), ("周", 2.12), ("吴", 2.05), ("徐", 1.67), ("孙", 1.54), ("胡", 1.31), ("朱", 1.26),
          ("高", 1.21), ("林", 1.18), ("何", 1.17), ("郭", 1.15), ("马", 1.05), ("罗", 0.86)]
NEXT_80 = ("梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶阎余潘杜戴夏钟汪田任姜范方石姚谭廖邹熊"
           "金陆郝孔白崔康毛邱秦江史顾侯邵孟龙万段雷钱汤尹黎易常武乔贺赖龚文")
GIVEN = ("伟芳娜秀英敏静丽强磊军洋勇艳杰娟涛明超兰霞平刚桂华建国红玉梅飞鹏辉宇浩然子涵欣怡梓轩思雨晨"
         "博文雅婷佳琪俊豪嘉欣诗雨泽宇一诺睿可馨瑞宏志海波燕萍玲琳晶颖丹阳亮成斌林峰东龙春雪云凤长乐"
         "重行朝和少小")


def surnames():
    names = [s for s, _ in TOP_20] + list(NEXT_80)
    weights = [w for _, w in TOP_20]
    for i in range(len(NEXT_80)):
        weights.append(0.85 * (0.1 / 0.85) ** (i / (len(NEXT_80) - 1)))
    return names, weights


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    names, weights = surnames()
    for _ in range(count):
        given = "".join(rng.choice(GIVEN) for _ in range(rng.choice((1, 2))))
        name = rng.choices(names, weights)[0] + given
        syllables = lazy_pinyin(name, style=Style.NORMAL, v_to_u=False)
        initials = lazy_pinyin(name, style=Style.FIRST_LETTER, v_to_u=False)
        retroflex = "".join(
            i if i in ("zh", "ch", "sh") else f
            for i, f in zip(lazy_pinyin(name, style=Style.INITIALS, strict=False), initials))
        # Mixed: each character as itself, its full pinyin or its initial, not all characters.
        mixed = ""
        while True:
            choices = [rng.randrange(3) for _ in name]
            if any(choices):
                break
        for c, s, i, k in zip(name, syllables, initials, choices):
            mixed += (c, s, i)[k]
        last = syllables[-1]
        prefix = "".join(syllables[:-1]) + last[:rng.randrange(1, len(last) + 1)]
        print(json.dumps({"name": name, "full": "".join(syllables), "spaced": " ".join(syllables),
                          "initials": "".join(initials), "mixed": mixed, "prefix": prefix,
                          "retroflex": retroflex}, ensure_ascii=False))


if __name__ == "__main__":
    main()
