"""The multilingual lexicon: the common action and object words of other languages, each with
the English word tool names and descriptions use.

The tokenizer (:mod:`.tokenize`) stems a word of this table as its English word, in queries and
documents alike: ``创建 GitHub issue`` is ranked as ``create github issue``, and a Spanish tool
description's ``crear`` meets the query ``create``. Its function words (:data:`FUNCTION_WORDS`)
are dropped from queries like English stopwords, and the table's words of scripts written
without spaces (Chinese, Japanese, Korean) cut a run of such text into words before the rest
becomes character bigrams.

The table holds whole words as users type them (infinitive, imperative, polite forms, common
nouns), written with their accents: they are folded as text is (casefolded, Latin, Greek and
Cyrillic accents stripped) when the tokenizer reads them. A word that is also an English word
of tool texts (``modifier``, ``lien``, ``hole``, ``ver``) is left out: documents are translated
too, and it would change what an English description says.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = ["ACTION_WORDS", "FUNCTION_WORDS", "LANGUAGES"]

LANGUAGES: Final = ("zh", "ja", "ko", "es", "fr", "de")
"""The languages of the table (ISO 639-1)."""

# An English word, then its words in each language on indented lines ("zh: 创建, 新建"); a
# longer list goes on in a line indented further.
_ACTIONS = """
create
    zh: 创建, 新建, 建立, 添加, 新增
    ja: 作成, 作って, 作る, 追加, 新規
    ko: 생성, 만들, 만들기, 추가, 새로
    es: crear, crea, cree, creame, nuevo, nueva, agregar, agrega, añadir, añade
    fr: créer, crée, créez, nouveau, nouvelle, ajouter, ajoute, ajoutez
    de: erstellen, erstelle, erstell, anlegen, lege, erzeugen, erzeuge, neu, neue, neuen, neues,
        hinzufügen, füge
get
    zh: 获取, 查看, 显示, 读取, 打开, 看看
    ja: 取得, 表示, 見せて, 見る, 読む, 開く
    ko: 조회, 보여, 보기, 가져, 읽기, 열기
    es: obtener, obten, mostrar, muestra, muestrame, leer, abrir, abre
    fr: obtenir, obtiens, afficher, affiche, affichez, montrer, montre, montrez, lire, lis,
        ouvrir, ouvre, voir
    de: abrufen, rufe, holen, anzeigen, zeige, zeig, zeigen, lesen, lies, öffnen, öffne
list
    zh: 列出, 列表, 所有
    ja: 一覧, リスト, 全て, すべて
    ko: 목록, 나열, 모든, 전체
    es: listar, lista, enumerar, todas
    fr: lister, liste, listez, énumérer, tous, toutes
    de: auflisten, liste, alle
update
    zh: 更新, 修改, 编辑, 更改
    ja: 更新, 編集, 変更, 修正
    ko: 수정, 업데이트, 변경, 편집
    es: actualizar, actualiza, editar, edita, modificar, modifica, cambiar, cambia
    fr: mettre, actualiser, modifie, modifiez, éditer, édite, changer
    de: aktualisieren, aktualisiere, bearbeiten, bearbeite, ändern, ändere, ändre
delete
    zh: 删除, 移除, 删掉, 去掉
    ja: 削除, 消す, 消して, 除去
    ko: 삭제, 제거, 지우, 지워
    es: borrar, borra, eliminar, elimina, quitar, quita
    fr: supprimer, supprime, supprimez, effacer, efface, retirer, retire
    de: löschen, lösche, lösch, entfernen, entferne
send
    zh: 发送, 寄送
    ja: 送信, 送る, 送って
    ko: 보내, 보내기, 전송, 발송
    es: enviar, envia, envíame, mandar, manda
    fr: envoyer, envoie, envoyez, expédier
    de: senden, sende, schicken, schicke, versenden, verschicken
search
    zh: 搜索, 查找, 搜寻, 寻找, 找到, 查询
    ja: 検索, 探す, 探して
    ko: 검색, 찾기, 찾아
    es: buscar, busca, búscame, encontrar, encuentra
    fr: chercher, cherche, cherchez, rechercher, recherche, trouver, trouve
    de: suchen, suche, finden, finde
comment
    zh: 评论, 留言
    ja: コメント
    ko: 댓글, 코멘트
    es: comentario, comentar, comenta
    fr: commentaire, commenter, commente
    de: kommentar, kommentieren, kommentiere
merge
    zh: 合并
    ja: マージ, 統合
    ko: 병합, 머지
    es: fusionar, fusiona
    fr: fusionner, fusionne
    de: zusammenführen, mergen
close
    zh: 关闭
    ja: 閉じる, 閉じて, クローズ
    ko: 닫기, 닫아, 종료
    es: cerrar, cierra
    fr: fermer, ferme, fermez
    de: schließen, schließe
upload
    zh: 上传
    ja: アップロード
    ko: 업로드, 올려
    es: subir, sube
    fr: téléverser, téléverse
    de: hochladen, lade
download
    zh: 下载
    ja: ダウンロード
    ko: 다운로드, 내려받
    es: descargar, descarga
    fr: télécharger, télécharge
    de: herunterladen
issue
    zh: 问题, 议题, 工单
    ja: イシュー, 課題, 問題
    ko: 이슈, 문제
    es: incidencia, problema
    fr: problème
    de: fehler
file
    zh: 文件, 档案
    ja: ファイル
    ko: 파일
    es: archivo, archivos, fichero
    fr: fichier, fichiers
    de: datei, dateien
folder
    zh: 文件夹, 目录
    ja: フォルダ, フォルダー, ディレクトリ
    ko: 폴더, 디렉토리
    es: carpeta, carpetas
    fr: répertoire
    de: ordner, verzeichnis
repository
    zh: 仓库, 代码库, 存储库
    ja: リポジトリ, レポジトリ
    ko: 저장소, 레포, 리포지토리
    es: repositorio
    fr: dépôt
branch
    zh: 分支
    ja: ブランチ
    ko: 브랜치
    es: rama
    fr: branche
    de: zweig
message
    zh: 消息, 信息
    ja: メッセージ
    ko: 메시지
    es: mensaje, mensajes
    fr: messages
    de: nachricht, nachrichten
email
    zh: 邮件, 电子邮件
    ja: メール
    ko: 이메일, 메일
    es: correo
    fr: courriel
user
    zh: 用户
    ja: ユーザー, ユーザ
    ko: 사용자, 유저
    es: usuario, usuarios
    fr: utilisateur, utilisateurs
    de: benutzer, nutzer
calendar
    zh: 日历
    ja: カレンダー
    ko: 캘린더, 달력
    es: calendario
    fr: calendrier
    de: kalender
event
    zh: 事件, 活动
    ja: イベント, 予定
    ko: 이벤트, 일정
    es: evento
    fr: événement
    de: ereignis
task
    zh: 任务
    ja: タスク
    ko: 작업, 할일
    es: tarea, tareas
    fr: tâche, tâches
    de: aufgabe, aufgaben
project
    zh: 项目
    ja: プロジェクト
    ko: 프로젝트
    es: proyecto
    fr: projet
    de: projekt
document
    zh: 文档
    ja: ドキュメント, 文書
    ko: 문서
    es: documento
    fr: document
    de: dokument
customer
    zh: 客户
    ja: 顧客
    ko: 고객
    es: cliente
    de: kunde, kunden
invoice
    zh: 发票
    ja: 請求書
    ko: 청구서, 송장
    es: factura
    fr: facture
    de: rechnung
"""

# Words that carry no search meaning in each language's requests (as English stopwords do).
_FUNCTION = """
zh: 的, 了, 吗, 呢, 吧, 把, 请, 帮我, 给我, 我的, 一个, 一下
ja: を, が, は, の, に, で, と, も, へ, や, して, する, します, ください, 下さい, てください,
    したい, から
ko: 을, 를, 은, 는, 이, 가, 의, 에, 에서, 로, 으로, 와, 과, 도, 해줘, 해주세요, 어줘, 어주세요,
    해, 줘, 주세요, 하기, 하다, 좀, 내, 나의
es: el, la, los, las, lo, un, una, unos, unas, de, del, al, en, con, por, para, y, o, que, mi,
    mis, su, sus, por, favor, quiero, puedes
fr: le, la, les, l, un, une, des, du, de, d, en, dans, avec, pour, par, et, ou, que, qui, mon,
    ma, mes, ton, ta, tes, son, sa, ses, veux, voudrais, peux, stp, svp
de: der, die, das, den, dem, des, ein, eine, einen, einem, einer, und, oder, mit, für, von, vom,
    zu, zum, zur, im, auf, mein, meine, meinen, meiner, bitte, ich, möchte, kannst
"""


def _parse_actions(text: str) -> Mapping[str, tuple[tuple[str, ...], ...]]:
    table: dict[str, tuple[tuple[str, ...], ...]] = {}
    english = language = ""
    words: dict[str, list[str]] = {}
    for line in [*text.splitlines(), "end"]:
        if not line.strip():
            continue
        if not line[0].isspace():  # the next English word: the last one is complete
            if english:
                table[english] = tuple(tuple(words.get(code, ())) for code in LANGUAGES)
            english, words = line.strip(), {}
            continue
        code, colon, rest = line.strip().partition(":")
        if colon and code in LANGUAGES:
            language = code
        else:
            rest = line
        if language not in LANGUAGES:
            raise ValueError(f"lexicon entry {english!r}: unknown language {code!r}")
        words.setdefault(language, []).extend(w.strip() for w in rest.split(",") if w.strip())
    return MappingProxyType(table)


def _entries(text: str) -> list[str]:
    """The entries of a table: a line that starts with a word starts an entry, an indented line
    continues it."""
    entries: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0].isspace() and entries:
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
    return entries


ACTION_WORDS: Final = _parse_actions(_ACTIONS)
"""Each English word with its words in each of :data:`LANGUAGES` (in that order), as written."""

FUNCTION_WORDS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        language.strip(): tuple(word.strip() for word in words.split(",") if word.strip())
        for language, _, words in (entry.partition(":") for entry in _entries(_FUNCTION))
    }
)
"""Each language's words dropped from queries, as written."""
