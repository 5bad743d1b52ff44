"""The multilingual lexicon: the common action and object words of other languages, each with
the English word tool names and descriptions use.

The tokenizer (:mod:`.tokenize`) stems a word of this table as its English word, in queries and
documents alike: ``创建 GitHub issue`` is ranked as ``create github issue``, and a Spanish tool
description's ``crear`` meets the query ``create``. Its function words (:data:`FUNCTION_WORDS`)
are dropped from queries like English stopwords, and the table's words of scripts written
without spaces (Chinese, Japanese, Korean) cut a run of such text into words before the rest
becomes character bigrams.

Its English words are the first actions and objects, then every word that the tool names of at
least five of the 92 servers of two catalogs no dev set was written from use (livemcpbench's MCP
servers and the SaaS catalog's APIs: ``python benchmarks/lexicon_vocabulary.py`` lists them, and
says which it leaves out and why): status, log, time, template, subscription...

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
copy
    zh: 复制, 拷贝
    ja: コピー, 複製
    ko: 복사
    es: copiar, copia
    fr: copier, copie
    de: kopieren, kopiere, kopie
cancel
    zh: 取消
    ja: キャンセル, 取り消し, 取消
    ko: 취소
    es: cancelar, cancela
    fr: annuler, annule, annulez
    de: abbrechen, brich, stornieren, storniere
check
    zh: 检查, 核对
    ja: 確認, チェック
    ko: 확인, 체크
    es: comprobar, comprueba, verificar, verifica
    fr: vérifie, vérifiez
    de: prüfen, prüfe, überprüfen, überprüfe
start
    zh: 启动, 开始, 开启
    ja: 開始, 起動
    ko: 시작
    es: iniciar, inicia, empezar, empieza, arrancar, arranca
    fr: démarrer, démarre, démarrez, lancer, lancez, commencer, commence
    de: starten, starte
stop
    zh: 停止
    ja: 停止, 止めて, 止める
    ko: 중지, 정지, 멈춰
    es: detener, detén, detiene, parar
    fr: arrêter, arrête, arrêtez
    de: stoppen, stoppe, anhalten, beenden, beende
move
    zh: 移动
    ja: 移動
    ko: 이동, 옮기, 옮겨
    es: mover, mueve
    fr: déplacer, déplace, déplacez
    de: verschieben, verschiebe
write
    zh: 写入
    ja: 書き込み, 書き込む, 書いて
    ko: 쓰기
    es: escribir, escribe
    fr: écrire, écris, écrivez
    de: schreiben, schreibe, schreib
convert
    zh: 转换
    ja: 変換
    ko: 변환
    es: convertir, convierte
    fr: convertis, convertissez
    de: konvertieren, konvertiere, umwandeln, wandle
generate
    zh: 生成
    ja: 生成
    es: generar, genere
    fr: générer, génère, générez
    de: generieren, generiere
reset
    zh: 重置
    ja: リセット
    ko: 초기화, 리셋
    es: restablecer, restablece, reiniciar, reinicia
    fr: réinitialiser, réinitialise
    de: zurücksetzen, zurückzusetzen
insert
    zh: 插入
    ja: 挿入
    ko: 삽입
    es: insertar, inserta
    fr: insérer, insère, insérez
    de: einfügen
clear
    zh: 清除, 清空
    ja: クリア
    ko: 비우, 비워
    es: limpiar, limpia, vaciar, vacía
    fr: vider, vide, videz
    de: leeren, leere
validate
    zh: 验证, 校验
    ja: 検証
    ko: 검증
    es: validar, valida
    fr: valider, valide, validez
    de: validieren, validiere
disable
    zh: 禁用, 停用
    ja: 無効, 無効化
    ko: 비활성화
    es: desactivar, desactiva, deshabilitar, deshabilita
    fr: désactiver, désactive, désactivez
    de: deaktivieren, deaktiviere
export
    zh: 导出
    ja: エクスポート, 書き出し
    ko: 내보내기, 내보내
    es: exportar, exporta
    fr: exporte, exportez
    de: exportieren, exportiere
publish
    zh: 发布
    ja: 公開
    ko: 게시, 발행
    es: publicar, publica
    fr: publier, publie, publiez
    de: veröffentlichen, veröffentliche
current
    zh: 当前, 现在, 目前
    ja: 現在
    ko: 현재, 지금
    es: actuales
    fr: actuel, actuelle, actuels, actuelles
    de: aktuell, aktuelle, aktuellen, aktueller, aktuelles
status
    zh: 状态
    ja: 状態, ステータス
    ko: 상태
    es: estado
    fr: statut, état
    de: zustand
token
    zh: 令牌
    ja: トークン
    ko: 토큰
    fr: jeton, jetons
settings
    zh: 设置, 设定, 配置
    ja: 設定
    ko: 설정
    es: configuración, ajustes
    fr: paramètres, réglages
    de: einstellungen, einstellung
tag
    zh: 标签
    ja: タグ
    ko: 태그
    es: etiqueta, etiquetas
    de: schlagwort, schlagwörter
label
    ja: ラベル
    ko: 라벨, 레이블
content
    zh: 内容
    ja: 内容, コンテンツ
    ko: 내용, 콘텐츠
    es: contenido
    fr: contenu
    de: inhalt, inhalte
member
    zh: 成员
    ja: メンバー
    ko: 멤버, 구성원
    es: miembro, miembros
    fr: membre, membres
    de: mitglied, mitglieder
version
    zh: 版本
    ja: バージョン
    ko: 버전
log
    zh: 日志
    ja: ログ
    ko: 로그
    de: protokoll, protokolle
item
    ja: アイテム, 項目
    ko: 항목, 아이템
    es: elemento, elementos
    de: eintrag, einträge
image
    zh: 图片, 图像
    ja: 画像
    ko: 이미지
    es: imagen, imágenes
    de: bild, bilder
time
    zh: 时间, 几点
    ja: 時間, 時刻, 何時
    ko: 시간
    es: hora, tiempo
    fr: heure, temps
    de: zeit, uhrzeit
key
    zh: 密钥
    ja: キー
    ko: 키
    es: clave, claves
    fr: clé, clés
    de: schlüssel
request
    zh: 请求
    ja: リクエスト
    ko: 요청
    es: solicitud, petición
    fr: demande, demandes
    de: anfrage, anfragen
permission
    zh: 权限
    ja: 権限
    ko: 권한
    es: permiso, permisos
    fr: autorisation, autorisations
    de: berechtigung, berechtigungen
resource
    zh: 资源
    ja: リソース
    ko: 리소스
    es: recurso, recursos
    fr: ressource, ressources
    de: ressourcen
code
    zh: 代码
    ja: コード
    ko: 코드
    es: código
text
    zh: 文本, 文字
    ja: テキスト
    ko: 텍스트
    es: texto
    fr: texte
group
    zh: 群组, 分组
    ja: グループ
    ko: 그룹
    es: grupo, grupos
    fr: groupe, groupes
    de: gruppe, gruppen
subscription
    zh: 订阅
    ja: サブスクリプション, 購読
    ko: 구독
    es: suscripción, suscripciones
    fr: abonnement, abonnements
    de: abonnements
account
    zh: 账户, 账号
    ja: アカウント
    ko: 계정
    es: cuenta, cuentas
    fr: compte, comptes
    de: konto, konten
profile
    zh: 个人资料
    ja: プロフィール
    ko: 프로필
    es: perfil
    fr: profil
link
    zh: 链接
    ja: リンク
    ko: 링크
    es: enlace, enlaces
    de: verknüpfung
template
    zh: 模板
    ja: テンプレート
    ko: 템플릿
    es: plantilla, plantillas
    fr: modèle, modèles
    de: vorlage, vorlagen
history
    zh: 历史, 历史记录
    ja: 履歴
    ko: 이력, 히스토리
    es: historial
    fr: historique
    de: verlauf
location
    zh: 位置
    ja: 場所, 位置
    ko: 위치
    es: ubicación
    fr: emplacement
    de: standort
domain
    zh: 域名
    ja: ドメイン
    ko: 도메인
    es: dominio, dominios
    fr: domaine, domaines
metric
    zh: 指标
    ja: メトリクス, 指標
    ko: 메트릭, 지표
    es: métrica, métricas
    fr: métrique, métriques
    de: metrik, metriken
report
    zh: 报告, 报表
    ja: レポート, 報告
    ko: 보고서, 리포트
    es: informe, informes, reporte
    fr: rapport, rapports
    de: bericht, berichte
policy
    zh: 策略
    ja: ポリシー
    ko: 정책
    es: política, políticas
    fr: politique, politiques
    de: richtlinie, richtlinien
application
    zh: 应用程序
    ja: アプリ, アプリケーション
    ko: 앱, 애플리케이션
    es: aplicación, aplicaciones
    de: anwendung, anwendungen
role
    zh: 角色
    ja: ロール, 役割
    ko: 역할
    es: rol
    fr: rôle, rôles
    de: rolle, rollen
price
    zh: 价格
    ja: 価格, 値段
    ko: 가격
    es: precio, precios
    fr: prix
    de: preis, preise
team
    zh: 团队
    ja: チーム
    ko: 팀
    es: equipo, equipos
    fr: équipe, équipes
card
    zh: 卡片
    ja: カード
    ko: 카드
    es: tarjeta, tarjetas
    fr: carte, cartes
    de: karte, karten
object
    zh: 对象
    ja: オブジェクト
    ko: 객체, 오브젝트
    es: objeto, objetos
    fr: objet, objets
    de: objekt, objekte
query
    ja: クエリ, クエリー
    ko: 쿼리
    es: consulta, consultas
    fr: requête, requêtes
    de: abfrage, abfragen
value
    zh: 数值
    ko: 값
    es: valor, valores
    fr: valeur, valeurs
    de: wert, werte
session
    zh: 会话
    ja: セッション
    ko: 세션
    es: sesión, sesiones
    de: sitzung, sitzungen
option
    zh: 选项
    ja: オプション
    ko: 옵션
    es: opción, opciones
page
    zh: 页面
    ja: ページ
    ko: 페이지
    es: página, páginas
    de: seite, seiten
commit
    zh: 提交
    ja: コミット
    ko: 커밋
device
    zh: 设备
    ja: デバイス, 端末
    ko: 장치, 기기
    es: dispositivo, dispositivos
    fr: appareil, appareils
    de: gerät, geräte
notification
    zh: 通知
    ja: 通知
    ko: 알림
    es: notificación, notificaciones
    de: benachrichtigung, benachrichtigungen
record
    zh: 记录
    ja: レコード
    ko: 레코드
    es: registro, registros
    fr: enregistrement, enregistrements
    de: datensatz, datensätze
result
    zh: 结果
    ja: 結果
    ko: 결과
    es: resultado, resultados
    fr: résultat, résultats
    de: ergebnis, ergebnisse
attachment
    zh: 附件
    ja: 添付ファイル, 添付
    ko: 첨부, 첨부파일
    es: adjunto, adjuntos
    de: anhang, anhänge
channel
    zh: 频道
    ja: チャンネル
    ko: 채널
    es: canales
    de: kanal, kanäle
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
