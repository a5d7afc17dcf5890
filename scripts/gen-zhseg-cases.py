#!/usr/bin/env python3
"""Generate tests/data/zhseg/cases.jsonl: texts and their segmentation by jieba (the
reference of lib/text/zhseg), one {"text": ..., "jieba": [tokens]} per line.

Usage: python3 scripts/gen-zhseg-cases.py > tests/data/zhseg/cases.jsonl
Needs jieba (pip install jieba, or Debian's python3-jieba); it is given Debian's dict.txt,
the dictionary the tests load. The texts are the edge cases below and lines taken at fixed
strides from samples/corpus (Chinese and Traditional Chinese of every domain, some English
and code), so the file changes only when the samples, this script or jieba change.
"""
import json
import logging
import os
import sys

import jieba

DICT = "/usr/lib/python3/dist-packages/jieba/dict.txt"
TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

EDGE = [
    "",
    "我来到北京清华大学",
    "他来到了网易杭研大厦",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
    "结婚的和尚未结婚的",
    "我用Python3.11写了一个C++和c#的程序，AT&T的iPhone 15售价999美元。",
    "GDP增长了3.14%，而CPI上涨了-0.5%；版本号是v1.2.3-rc1，文件名my_file.txt。",
    "3.14.15 50% 100%% .5 5. a.b a..b 1,000,000 1e10 0x1F",
    "全角字符：ＡＢＣ１２３，全角空格　在这里！？（括号）【方括号】《书名号》",
    "标点…… —— ～ · 「引号」『双引号』“英文引号”‘单引号’",
    "空白\t制表符\r\n回车换行\n换行\r回车\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0不换行空格",
    "各种空格\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000结束",
    "零宽\u200b空格\ufeff和软连字符\u00ad",
    "表情😀😃🎉，日本語のひらがなとカタカナ，한국어 문장",
    "繁體中文的句子：臺灣的國語和香港的粵語。",
    "扩展A区字符㐀㐁㑇和新字符\u9fd6\u9fea\u9fff以及兼容字符\uf900\ufa0e",
    "中文English混合mixed文本text，数字123和456。",
    "http://www.example.com/path?a=1&b=2 email: someone@example.com",
    "   前导空格和尾随空格   ",
    "\n\n\n",
    "一",
    "a",
    "。",
    "的的的的的的的的的的的的的的的的的的的的",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "int main(void) { return x->y[0] + 1; } // 注释",
    "李小福是创新办主任也是云计算方面的专家",
    "乒乓球拍卖完了",
    "南京市长江大桥",
    "研究生命的起源",
    "今天天气不错，我们去公园散步吧！",
    "王晓明和张大伟在上海浦东新区的陆家嘴金融中心见面。",
    "《中华人民共和国民法典》第一千二百六十条",
    "第一条　为了保护民事主体的合法权益，调整民事关系，维护社会和经济秩序，制定本法。",
    "（一）不满八周岁的未成年人；（二）不能辨认自己行为的成年人；",
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
    "A-B C_D E+F G#H I&J K.L M%N O-",
    "---+++###&&&...___%%%",
    "2024年5月1日下午3点30分，温度25.5℃，湿度60%。",
    "Ｈｅｌｌｏ　Ｗｏｒｌｄ　１２３",
    "B超和X光检查",
    "中\u0301文",
]


def sample_lines():
    out = []
    files = ["books", "legal", "news", "qa", "wiki", "web"]
    for f in files:
        docs = {}
        with open(os.path.join(TOP, "samples/corpus/%s.jsonl" % f), encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                docs.setdefault(d.get("lang", ""), []).append(d["text"])
        for lang in ("zh", "zh-Hant", "en"):
            ds = docs.get(lang, [])
            if not ds:
                continue
            want = 4 if lang == "en" else 25
            step = max(1, len(ds) // want)
            for t in ds[::step][:want]:
                lines = [l for l in t.split("\n") if l.strip()]
                for l in lines[:2]:
                    out.append(l[:300])
    # a few whole documents: several lines, blank lines and indentation
    with open(os.path.join(TOP, "samples/corpus/books.jsonl"), encoding="utf-8") as fh:
        zh = [json.loads(l)["text"] for l in fh if '"lang": "zh"' in l]
    out += [t for t in zh[::400] if len(t) < 2000][:5]
    return out


def main():
    jieba.setLogLevel(logging.WARNING)
    jieba.set_dictionary(DICT)
    for t in EDGE + sample_lines():
        print(json.dumps({"text": t, "jieba": jieba.lcut(t)}, ensure_ascii=False))
    print("jieba %s, %d cases" % (jieba.__version__, len(EDGE) + len(sample_lines())), file=sys.stderr)


main()
