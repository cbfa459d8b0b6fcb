import CofferRecords

extension FullTextTokenizer {
    /// Coffer's pinyin tokenizer, for contact and title search (registered on every connection Coffer
    /// opens): each Chinese character is indexed as itself and, at the same position, under every
    /// toneless reading Unicode's Unihan database gives it (单 as `dan`, `shan`, `chan`; 吕 as `lv`) and
    /// each reading's first letter, so ``FullTextPattern/pinyin(_:)`` finds 张三 by `zhangsan`, `zs`,
    /// `zhang s`, `张s` or `zhangs`. Traditional characters are folded to simplified ones (資料庫 and
    /// 资料库 find each other). Other scripts are split as SQLite's `unicode61` does.
    ///
    /// Query an index using it with ``FullTextPattern/pinyin(_:)``: other patterns find its Latin words
    /// but not its Chinese characters (each character is several terms at one position, which a plain
    /// phrase does not express). Files using it need Coffer (or its C registration) to be searched or
    /// written.
    public static let pinyin = FullTextTokenizer(declaration: "coffer_pinyin")

    /// The pinyin tokenizer, folding traditional characters to simplified ones or not (`fold=0`).
    public static func pinyin(foldsTraditional: Bool) -> FullTextTokenizer {
        foldsTraditional ? .pinyin : FullTextTokenizer(declaration: "coffer_pinyin \"fold=0\"")
    }

    /// Coffer's tokenizer for phone numbers, e-mail addresses, order numbers and user ids: any run of
    /// three or more of their letters and digits finds the row, whatever separators the text or the
    /// query has (`1380013` finds `+86 138 0013 8000`; `doe@exa` finds `john.doe@example.com`). Every
    /// character trigram is a term: the index is about 3× the text (20,000 phone numbers and e-mail
    /// addresses: 2.1 MB for 0.7 MB). Query it with any pattern, ``FullTextPattern/searchBox(_:)``
    /// included.
    public static let identifier = FullTextTokenizer(declaration: "coffer_identifier")
}
